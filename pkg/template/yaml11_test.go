package template_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// TestBuiltinTemplatesYAML11 compares every scalar of every built-in
// invoice2data template, as the loader resolves it, with what invoice2data's
// own loader yields: testdata/yaml11/builtin.json was written once by
// testdata/yaml11/gen.py with PyYAML 6.0.3 (yaml.safe_load for .yml,
// json.load for .json); this test needs no Python. The digest covers every
// scalar; the notable ones (non-strings, and strings a YAML 1.2 reader would
// type, such as 04080176) are compared one by one for a readable failure.
func TestBuiltinTemplatesYAML11(t *testing.T) {
	t.Parallel()
	root := filepath.Join(templatetest.SharedDir(t), "corpus", "invoice2data", "templates")
	raw, err := os.ReadFile(filepath.Join("testdata", "yaml11", "builtin.json"))
	require.NoError(t, err)
	var want map[string]struct {
		SHA256  string     `json:"sha256"`
		Scalars int        `json:"scalars"`
		Notable [][]string `json:"notable"`
	}
	require.NoError(t, json.Unmarshal(raw, &want))
	require.Len(t, want, 215, "every built-in template has an entry")
	seen := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		w, ok := want[rel]
		require.True(t, ok, "no PyYAML fixture for %s", rel)
		seen++
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		lines, err := template.YAMLScalarLines(p, data)
		require.NoError(t, err, rel)
		have := map[string]bool{}
		for _, l := range lines {
			have[l] = true
		}
		for _, n := range w.Notable {
			require.True(t, have[strings.Join(n, "\t")], "%s: PyYAML reads %s as %s %q", rel, n[0], n[1], n[2])
		}
		sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
		require.Equal(t, w.Scalars, len(lines), rel)
		require.Equal(t, w.SHA256, hex.EncodeToString(sum[:]), "%s: some scalar differs from PyYAML's", rel)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(want), seen)
}

// Static values reach the output typed as invoice2data types them.
func TestStaticValuesYAML11(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("t.yml", []byte("keywords: [X]\nfields:\n  coc: {parser: static, value: 04080176}\n  flag: {parser: static, value: yes}\n"+
		"  octal: {parser: static, value: 010}\n  sci: {parser: static, value: 1e5}\n  big: {parser: static, value: 1_000}\n  f: {parser: static, value: 1.50}\n"))
	require.NoError(t, err)
	res, err := tpl.Extract(t.Context(), "X", nil)
	require.NoError(t, err)
	b, err := json.Marshal(res.Fields)
	require.NoError(t, err)
	require.JSONEq(t, `{"issuer":"X","coc":"04080176","flag":true,"octal":8,"sci":"1e5","big":1000,"f":1.5,"currency":"EUR"}`, string(b))
}
