package systemtest_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

var (
	metricDef = regexp.MustCompile(`(?:Name:\s*|NewDesc\(\s*)"(docintake_[a-z0-9_]+)"`)
	metricUse = regexp.MustCompile(`\bdocintake_[a-z0-9_]+`)
)

// codeMetrics returns every docintake_* metric name registered in the
// repository's Go code (collector options and const-metric descriptors).
func codeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	root := repotest.Root(t)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range metricDef.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, names)
	return names
}

// base strips the series suffixes a histogram adds.
func base(name string, known map[string]bool) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, suf); ok && known[b] {
			return b
		}
	}
	return name
}

// requireKnown fails for any docintake_* name in expr that the code does
// not define: a renamed metric would silently empty a panel or never fire.
func requireKnown(t *testing.T, known map[string]bool, where, expr string) []string {
	t.Helper()
	var used []string
	for _, n := range metricUse.FindAllString(expr, -1) {
		b := base(n, known)
		require.True(t, known[b], "%s uses %s, which no code defines", where, n)
		used = append(used, b)
	}
	require.Equal(t, strings.Count(expr, "("), strings.Count(expr, ")"), "%s: unbalanced parentheses in %q", where, expr)
	require.Equal(t, strings.Count(expr, "{"), strings.Count(expr, "}"), "%s: unbalanced braces in %q", where, expr)
	return used
}

func TestREADMEListsEveryMetric(t *testing.T) {
	t.Parallel()
	known := codeMetrics(t)
	b, err := os.ReadFile(filepath.Join(repotest.Root(t), "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	require.True(t, ok, "README.md has a Metrics section")
	section, _, _ = strings.Cut(section, "\n## ")
	for name := range known {
		require.Contains(t, section, "`"+name+"`", "README's Metrics section does not explain %s", name)
	}
	requireKnown(t, known, "README Metrics section", section)
}

func TestAlertRules(t *testing.T) {
	t.Parallel()
	known := codeMetrics(t)
	b, err := os.ReadFile(filepath.Join(repotest.Root(t), "deploy", "prometheus", "alerts.yml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(b, &rules))
	require.NotEmpty(t, rules.Groups)
	seen := map[string]bool{}
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.Regexp(t, `^Docintake[A-Za-z]+$`, r.Alert)
			require.False(t, seen[r.Alert], "alert %s defined twice", r.Alert)
			seen[r.Alert] = true
			require.Contains(t, []string{"info", "warning", "critical"}, r.Labels["severity"], r.Alert)
			require.NotEmpty(t, r.Annotations["summary"], r.Alert)
			if r.For != "" {
				require.Regexp(t, `^[0-9]+[smh]$`, r.For, r.Alert)
			}
			requireKnown(t, known, r.Alert, r.Expr)
			exprs = append(exprs, r.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for what, needle := range map[string]string{
		"DLQ growth":         `docintake_documents{state="dlq"}`,
		"oldest pending age": "docintake_consumer_oldest_pending_age_seconds",
		"delivery failures":  "docintake_dispatcher_attempts_total",
		"exhausted delivery": `docintake_dispatcher_deliveries_total{outcome="failed"}`,
		"disabled endpoints": "docintake_dispatcher_disabled_endpoints",
		"readiness":          `route="/readyz",code="503"`,
		"targets down":       `up{job=~"docintake-.*"}`,
	} {
		require.Contains(t, all, needle, "no alert covers %s", what)
	}
}

func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	known := codeMetrics(t)
	b, err := os.ReadFile(filepath.Join(repotest.Root(t), "deploy", "grafana", "docintake.json"))
	require.NoError(t, err)
	var dash struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ H, W, X, Y int } `json:"gridPos"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	require.Equal(t, "docintake", dash.UID)
	ids := map[int]bool{}
	var used []string
	for _, p := range dash.Panels {
		require.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		require.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q is wider than the grid", p.Title)
		if p.Type == "row" {
			continue
		}
		require.NotNil(t, p.Datasource, p.Title)
		require.Equal(t, "prometheus", p.Datasource.UID, "%s: the provisioned datasource's uid", p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.RefID, p.Title)
			used = append(used, requireKnown(t, known, p.Title, tg.Expr)...)
		}
	}
	for what, name := range map[string]string{
		"queue depth per consumer": "docintake_consumer_pending",
		"oldest pending age":       "docintake_consumer_oldest_pending_age_seconds",
		"documents by state":       "docintake_documents",
		"throughput: processor":    "docintake_processor_jobs_total",
		"throughput: dispatcher":   "docintake_dispatcher_deliveries_total",
		"latency: upload":          "docintake_http_request_duration_seconds",
		"latency: extraction":      "docintake_processor_extraction_seconds",
		"latency: webhook":         "docintake_dispatcher_attempt_duration_seconds",
		"webhook outcomes":         "docintake_dispatcher_attempts_total",
		"disabled endpoints":       "docintake_dispatcher_disabled_endpoints",
	} {
		require.True(t, slices.Contains(used, name), "the dashboard has no panel for %s (%s)", what, name)
	}
	require.Contains(t, string(b), `docintake_documents{state=\"dlq\"}`, "the dashboard shows the DLQ size")
}
