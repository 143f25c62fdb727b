package template_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// TestBuiltinTemplatesLoad loads every built-in invoice2data template. Each
// must load (lenient: broken parts disabled); the test logs how many compile
// fully and the problems of the rest.
func TestBuiltinTemplatesLoad(t *testing.T) {
	t.Parallel()
	root := filepath.Join(templatetest.SharedDir(t), "corpus", "invoice2data", "templates")
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, 215)
	full, backtracking := 0, 0
	reasons := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		tpl, err := template.Parse(f, data)
		require.NoError(t, err, "every built-in template must load")
		if usesBacktracking(tpl) {
			backtracking++
		}
		if len(tpl.Problems) == 0 {
			full++
			continue
		}
		for _, p := range tpl.Problems {
			rel, _ := filepath.Rel(root, p.File)
			t.Logf("%s:%d: %s: %v", rel, p.Line, p.Path, p.Err)
			reasons[problemClass(p.Err.Error())]++
		}
	}
	var rs []string
	for r, n := range reasons {
		rs = append(rs, r+": "+itoa(n))
	}
	sort.Strings(rs)
	t.Logf("built-in templates: %d loaded, %d compile fully, %d use the backtracking engine; problems: %s",
		len(files), full, backtracking, strings.Join(rs, "; "))
	// The counts docs/templates.md states (read from the problems above:
	// 13 templates have mistakes of their own).
	require.Equal(t, 202, full)

	// Two files share one name; the lenient loader says so with both paths,
	// the strict one fails on it.
	set, err := template.LoadWith(template.LoadOptions{Lenient: true}, root)
	require.NoError(t, err)
	require.Contains(t, set.Warnings(), `template: duplicate name "com.amazon.aws" in `+filepath.Join(root, "com", "com.amazon.aws.yml")+
		" (name from the file name) and "+filepath.Join(root, "fr", "com.amazon.aws.yml")+" (name from the file name) (the first is chosen by name)")
	require.Len(t, set.Templates(), 215)
	_, err = template.Load(root)
	require.ErrorContains(t, err, `duplicate name "com.amazon.aws" in `+filepath.Join(root, "com", "com.amazon.aws.yml"))
}

func usesBacktracking(tpl *template.Template) bool {
	var all []*template.Regex
	all = append(all, tpl.Keywords...)
	all = append(all, tpl.ExcludeKeywords...)
	for _, r := range tpl.Options.Replace {
		all = append(all, r.Re)
	}
	addLines := func(l *template.LinesSpec) {
		if l == nil {
			return
		}
		for _, r := range l.Rules {
			all = append(all, r.Start, r.End)
			for _, set := range [][]*template.Regex{r.Line, r.FirstLine, r.LastLine, r.SkipLine} {
				all = append(all, set...)
			}
		}
	}
	addLines(tpl.Lines)
	for _, f := range tpl.Fields {
		all = append(all, f.Regexes...)
		addLines(f.Lines)
	}
	for _, tb := range tpl.Tables {
		all = append(all, tb.Start, tb.End, tb.Body)
	}
	for _, r := range all {
		if r != nil && r.Backtracking() {
			return true
		}
	}
	return false
}

func problemClass(msg string) string {
	switch {
	case strings.Contains(msg, "unknown key for parser"):
		return "unknown key inside a field"
	case strings.Contains(msg, "unknown key"), strings.Contains(msg, "unknown option"), strings.Contains(msg, "unknown lines key"):
		return "unknown key"
	case strings.Contains(msg, "regex"):
		return "regex"
	}
	return msg
}

func itoa(n int) string { return strconv.Itoa(n) }
