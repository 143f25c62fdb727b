package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/webhook"
)

// The reference Standard Webhooks libraries accept the signatures the
// dispatcher sends (docs/webhooks.md tells client developers to use them).
// The libraries are installed at test time into a cache directory
// (~/.cache/docintake-reflibs, or INTAKE_REFLIBS_DIR).
//
// Rule: a test skips with the reason when its tool (node and npm, python3
// and pip) is not installed. When the tool exists but the install fails
// (no registry), the JavaScript test fails under CI=true — npm's registry
// is part of CI's network — and skips otherwise; the Python test always
// skips then, as PyPI is not reachable from every CI machine.

const refSecret = "whsec_ZGV2LXNpZ25pbmctc2VjcmV0LWZvci1sb2NhbC11c2U="

// refCase is one signed call; Valid says whether the library must accept it.
type refCase struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
	Valid     bool   `json:"valid"`
}

// refCases signs realistic bodies with webhook.Sign, plus tampered copies
// that any verifier must refuse (so a harness that accepts everything
// fails).
func refCases(t *testing.T) []refCase {
	t.Helper()
	now := time.Now()
	bodies := map[string]string{
		"success": `{"template":"contoso-po","message_id":"mail-4711","log_id":"9f1c6c1e-2f4b-4a0c-9d7e-2b1f0c1e2d3f",` +
			`"result":"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ORDER xmlns=\"http://www.opentrans.org/XMLSchema/2.1\">` +
			`<ORDER_HEADER><ORDER_INFO><ORDER_ID>4711</ORDER_ID><REMARKS>Lieferung bis Fr — Größe M, 10 % Rabatt</REMARKS>` +
			`</ORDER_INFO></ORDER_HEADER></ORDER>","status":"success","status_reason":null}`,
		"rejected": `{"template":"t","message_id":"m","log_id":"l","result":null,"status":"rejected","status_reason":"not_an_order"}`,
	}
	var cases []refCase
	for name, body := range bodies {
		id := "msg_" + name
		sig, err := webhook.Sign(refSecret, id, now, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		ts := fmt.Sprint(now.Unix())
		cases = append(cases,
			refCase{Name: name, ID: id, Timestamp: ts, Body: body, Signature: sig, Valid: true},
			refCase{Name: name + " with rotated secrets", ID: id, Timestamp: ts, Body: body, Signature: "v1,aGVsbG8= " + sig, Valid: true},
			refCase{Name: name + " tampered body", ID: id, Timestamp: ts, Body: body + " ", Signature: sig},
			refCase{Name: name + " other id", ID: id + "x", Timestamp: ts, Body: body, Signature: sig},
		)
	}
	return cases
}

// checkResults compares the library's verdict per case ("ok" or an error
// text, one line each) with the expectation.
func checkResults(t *testing.T, cases []refCase, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("got %d verdicts for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		if ok := lines[i] == "ok"; ok != c.Valid {
			t.Errorf("%s: library said %q, want valid=%v", c.Name, lines[i], c.Valid)
		}
	}
}

func reflibsDir(t *testing.T, lang string) string {
	t.Helper()
	base := os.Getenv("INTAKE_REFLIBS_DIR")
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory for the reference libraries: %v", err)
		}
		base = filepath.Join(cache, "docintake-reflibs")
	}
	dir := filepath.Join(base, lang)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runWith(t *testing.T, stdin []byte, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(string(stdin))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// JavaScript: the npm package standardwebhooks (standard-webhooks/
// standard-webhooks, libraries/javascript).
func TestReferenceLibraryJavaScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: cannot run the JavaScript reference library", tool)
		}
	}
	dir := reflibsDir(t, "npm")
	const pkg = "standardwebhooks@1.1.1"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json")); err != nil {
		if _, err := runWith(t, nil, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", pkg); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("npm is installed but cannot install %s: %v", pkg, err)
			}
			t.Skipf("cannot install %s (no npm registry?): %v", pkg, err)
		}
	}
	cases := refCases(t)
	in, _ := json.Marshal(cases)
	script := `
const { Webhook } = require(process.argv[1] + "/node_modules/standardwebhooks");
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const wh = new Webhook(process.argv[2]);
for (const c of cases) {
  try {
    wh.verify(c.body, {"webhook-id": c.id, "webhook-timestamp": c.timestamp, "webhook-signature": c.signature});
    console.log("ok");
  } catch (e) {
    console.log("refused: " + e.message);
  }
}`
	out, err := runWith(t, in, "node", "-e", script, dir, refSecret)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, cases, out)
}

// Python: the PyPI package standardwebhooks. It skips when the package
// cannot be installed (PyPI is not reachable everywhere).
func TestReferenceLibraryPython(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed: cannot run the Python reference library")
	}
	dir := reflibsDir(t, "python")
	if _, err := os.Stat(filepath.Join(dir, "standardwebhooks")); err != nil {
		_, err := runWith(t, nil, "python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
			"--timeout", "10", "--retries", "0", "--target", dir, "standardwebhooks")
		if err != nil {
			t.Skipf("cannot install the Python package standardwebhooks (PyPI unreachable?): %v", firstLine(err))
		}
	}
	cases := refCases(t)
	in, _ := json.Marshal(cases)
	script := `
import json, sys
sys.path.insert(0, sys.argv[1])
try:
    from standardwebhooks.webhooks import Webhook
except ImportError:
    from standardwebhooks import Webhook
wh = Webhook(sys.argv[2])
for c in json.load(sys.stdin):
    try:
        wh.verify(c["body"], {"webhook-id": c["id"], "webhook-timestamp": c["timestamp"], "webhook-signature": c["signature"]})
        print("ok")
    except Exception as e:
        print("refused: %s" % (e,))
`
	out, err := runWith(t, in, "python3", "-c", script, dir, refSecret)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, cases, out)
}

func firstLine(err error) string {
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}
