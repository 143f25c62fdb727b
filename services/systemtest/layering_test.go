package systemtest_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
)

const (
	modulePath = "github.com/docintake/docintake"
	wiring     = modulePath + "/pkg/system"
)

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath   string
	Name         string
	Imports      []string
	TestImports  []string // of its _test.go files in the package
	XTestImports []string // of its external test package
	Deps         []string
}

// goList runs `go list -json args...` in dir (a module of the workspace).
func goList(t *testing.T, dir string, args ...string) []listedPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go toolchain is not on PATH; cannot list packages")
	}
	cmd := exec.CommandContext(t.Context(), goBin, append([]string{"list", "-json"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list %v in %s: %v\n%s", args, dir, err, ee.Stderr)
	}
	require.NoError(t, err)
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// The wiring package (pkg/system: configuration to connected adapters) is
// for composition roots only: the services' commands and standalone, which
// runs them all in one process. A service's own package declares the Deps
// it needs and is handed them, so it can be run, tested and reused (a
// second intake channel, a test harness) without the process around it.
func TestOnlyMainsImportWiring(t *testing.T) {
	t.Parallel()
	root := repotest.Root(t)
	allowed := map[string]bool{modulePath + "/services/standalone": true}
	for _, svc := range []string{"ingest", "processor", "dispatcher", "intakectl", "mailintake", "standalone"} {
		for _, p := range goList(t, filepath.Join(root, "services", svc), "./...") {
			if p.Name == "main" || allowed[p.ImportPath] {
				continue
			}
			require.NotContains(t, p.Imports, wiring,
				"%s imports the wiring package: declare what it needs in its Deps and let the main hand it in", p.ImportPath)
		}
	}
}

// The dispatcher only calls webhooks: its binary must not carry the PDF
// engines (go-pdfium's WebAssembly runtime, poppler's helpers) or the
// template engine and its backtracking regexes, which are the code a
// hostile document or template reaches. A dependency that pulls one in
// (through pkg/system, pkg/config or a shared helper) fails here.
func TestDispatcherLinksNoDocumentEngines(t *testing.T) {
	t.Parallel()
	root := repotest.Root(t)
	pkgs := goList(t, filepath.Join(root, "services", "dispatcher"), "./cmd/dispatcher")
	require.Len(t, pkgs, 1)
	forbidden := []string{"github.com/klippa-app/go-pdfium", "github.com/tetratelabs/wazero", "github.com/dlclark/regexp2",
		modulePath + "/pkg/pdftext", modulePath + "/pkg/template", modulePath + "/pkg/catalogue",
		modulePath + "/pkg/generic", modulePath + "/pkg/embedded"}
	require.NotEmpty(t, pkgs[0].Deps)
	for _, dep := range pkgs[0].Deps {
		if i := slices.IndexFunc(forbidden, func(f string) bool { return dep == f || strings.HasPrefix(dep, f+"/") }); i >= 0 {
			t.Errorf("the dispatcher's command depends on %s (%s)", dep, forbidden[i])
		}
	}
}

// testOnlyServiceImports are the service imports a service's tests may
// make, by importing module: the dispatcher's tests drive the operator
// CLI (`intakectl dlq …`) against the dispatcher they start. Any other
// import of one service by another fails TestServicesImportNoOtherService.
var testOnlyServiceImports = map[string]string{"services/dispatcher": "services/intakectl"}

// Services never import each other (docs/development.md): what two
// services share lives under pkg/ (the mailbox reading code that the mail
// intake and `intakectl mailboxes test|replay` both run is pkg/mailbox).
// Only standalone, which runs the services in one process, and the tooling
// modules import services. The services are go.work's modules under
// services/, so a new service is checked without being listed here.
func TestServicesImportNoOtherService(t *testing.T) {
	t.Parallel()
	root := repotest.Root(t)
	var services []string
	for _, m := range workModules(t, root) {
		if strings.HasPrefix(m, "services/") && m != "services/standalone" && !toolingModules[m] {
			services = append(services, m)
		}
	}
	require.Contains(t, services, "services/mailintake", "the service modules were not found")
	for _, m := range services {
		for _, p := range goList(t, filepath.Join(root, m), "./...") {
			check := func(imports []string, tests bool) {
				for _, imp := range imports {
					other, ok := serviceModuleOf(imp, services)
					if !ok || other == m || tests && testOnlyServiceImports[m] == other {
						continue
					}
					t.Errorf("%s imports %s, another service's module (%s): move what both need under pkg/", p.ImportPath, imp, other)
				}
			}
			check(p.Imports, false)
			check(append(p.TestImports, p.XTestImports...), true)
		}
	}
}

// serviceModuleOf returns the service module of services that holds the
// package path imp.
func serviceModuleOf(imp string, services []string) (string, bool) {
	for _, m := range services {
		if mp := modulePath + "/" + m; imp == mp || strings.HasPrefix(imp, mp+"/") {
			return m, true
		}
	}
	return "", false
}
