// Package opentranstest validates openTRANS documents in tests against the
// official openTRANS 2.1 schema in ../shared/opentrans/xsd with xmllint, the
// check the project's acceptance criteria name.
//
// Tests skip (fail when CI=true) when ../shared or xmllint is missing, so a
// developer machine without them still runs the rest of a package's tests
// while CI can never pass without validating.
package opentranstest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
)

// SharedDir returns the ground-truth directory ../shared next to the
// repository root (the directory holding go.work). It skips the test when
// the directory is absent, or fails it when CI=true.
func SharedDir(tb testing.TB) string {
	tb.Helper()
	return repotest.Shared(tb)
}

// SchemaPath returns the path of opentrans_2_1.xsd; see SharedDir for when it
// skips.
func SchemaPath(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(SharedDir(tb), "opentrans", "xsd", "opentrans_2_1.xsd")
	if _, err := os.Stat(p); err != nil {
		skipOrFail(tb, "schema missing: "+err.Error())
	}
	return p
}

func skipOrFail(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("opentranstest: %s (CI=true: not skipping)", msg)
	}
	tb.Skipf("opentranstest: %s; skipping", msg)
}

func xmllint(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		skipOrFail(tb, "xmllint not installed (apt-get install libxml2-utils)")
	}
	return p
}

// Errors validates doc against the openTRANS 2.1 schema and returns
// xmllint's error lines (file name prefixes removed), nil when doc is
// valid. It fails the test if xmllint cannot run at all.
func Errors(tb testing.TB, doc []byte) []string {
	tb.Helper()
	schema := SchemaPath(tb)
	bin := xmllint(tb)
	f := filepath.Join(tb.TempDir(), "doc.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		tb.Fatalf("opentranstest: %v", err)
	}
	// --nonet: the schema and its imports are local; never fetch anything.
	out, err := exec.Command(bin, "--nonet", "--noout", "--schema", schema, f).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("opentranstest: run xmllint: %v", err)
	}
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, f+":"))
		if line == "" || strings.HasSuffix(line, " validates") || strings.HasSuffix(line, "fails to validate") {
			continue
		}
		errs = append(errs, line)
	}
	if err == nil && len(errs) > 0 {
		// xmllint exits 0 with warnings only; warnings are not errors.
		return nil
	}
	if err != nil && len(errs) == 0 {
		errs = append(errs, strings.TrimSpace(string(out)))
	}
	return errs
}

// Validate fails the test unless doc is valid against the openTRANS 2.1
// schema; the message lists xmllint's errors and the document.
func Validate(tb testing.TB, doc []byte) {
	tb.Helper()
	if errs := Errors(tb, doc); len(errs) > 0 {
		tb.Errorf("openTRANS document is not valid against opentrans_2_1.xsd:\n  %s\ndocument:\n%s",
			strings.Join(errs, "\n  "), doc)
	}
}
