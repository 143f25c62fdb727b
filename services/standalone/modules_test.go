package standalone_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
)

// TestModulesBuildWithoutWorkspace proves every module's go.mod is complete
// on its own: each builds with GOWORK=off (its docintake dependencies come
// through replace directives to the sibling directories) and `go mod tidy`
// would change nothing. go.work must list every module of the repository, so
// a new module cannot escape this check.
func TestModulesBuildWithoutWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every module; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go toolchain is not on PATH; cannot check the modules")
	}
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	require.NoError(t, err)
	work, err := modfile.ParseWork("go.work", data, nil)
	require.NoError(t, err)
	used := map[string]bool{}
	for _, u := range work.Use {
		used[filepath.Clean(u.Path)] = true
	}
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") && p != root {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			found = append(found, rel)
		}
		return nil
	}))
	for _, m := range found {
		require.Truef(t, used[m], "module %s is not listed in go.work", m)
	}
	for m := range used {
		t.Run(m, func(t *testing.T) {
			for _, args := range [][]string{{"build", "./..."}, {"mod", "tidy", "-diff"}} {
				cmd := exec.CommandContext(t.Context(), goBin, args...)
				cmd.Dir = filepath.Join(root, m)
				cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
				out, err := cmd.CombinedOutput()
				require.NoErrorf(t, err, "GOWORK=off go %s in %s:\n%s", strings.Join(args, " "), m, out)
			}
		})
	}
}
