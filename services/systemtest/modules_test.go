package systemtest_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
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
	root := repotest.Root(t)
	used := map[string]bool{}
	for _, m := range workModules(t, root) {
		used[m] = true
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

// workModules returns the directories go.work uses, relative to root.
func workModules(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	require.NoError(t, err)
	work, err := modfile.ParseWork("go.work", data, nil)
	require.NoError(t, err)
	dirs := make([]string, 0, len(work.Use))
	for _, u := range work.Use {
		dirs = append(dirs, filepath.Clean(u.Path))
	}
	return dirs
}

// toolingModules are the repository's modules that are not shipped: this
// one (benchmark, chaos, repo-wide tests) and the purchase-order generator.
// Every other module of go.work is product, so a new module counts as
// product until it is listed here.
var toolingModules = map[string]bool{"services/systemtest": true, "services/pogen": true}

// toolingOnly are the modules only tooling needs (path prefixes): the
// compose, Kubernetes and kustomize parsers of the deployment tests.
var toolingOnly = []string{"github.com/compose-spec/compose-go", "k8s.io/", "sigs.k8s.io/kustomize"}

// repoModule is one module of go.work: its directory and what its go.mod
// requires (direct and indirect: since Go 1.17 a go.mod lists every module
// that provides a package to the module's packages or their tests).
type repoModule struct {
	dir      string
	requires []string
}

func repoModules(t *testing.T, root string) map[string]repoModule {
	t.Helper()
	mods := map[string]repoModule{}
	for _, dir := range workModules(t, root) {
		p := filepath.Join(root, dir, "go.mod")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		f, err := modfile.ParseLax(p, data, nil)
		require.NoError(t, err)
		m := repoModule{dir: dir}
		for _, r := range f.Require {
			m.requires = append(m.requires, r.Mod.Path)
		}
		mods[f.Module.Mod.Path] = m
	}
	return mods
}

// No product module requires the tooling modules or a module only tooling
// needs (issue 26): the product's go.mod files, and so its builds and its
// users, never carry the deployment tests' parsers or the harnesses.
func TestProductRequiresNoTooling(t *testing.T) {
	mods := repoModules(t, repotest.Root(t))
	forbidden := func(path string) bool {
		if m, ok := mods[path]; ok {
			return toolingModules[m.dir]
		}
		for _, p := range toolingOnly {
			if strings.HasPrefix(path, p) {
				return true
			}
		}
		return false
	}
	var product []string
	for path, m := range mods {
		if toolingModules[m.dir] {
			continue
		}
		product = append(product, m.dir)
		for _, r := range m.requires {
			require.Falsef(t, forbidden(r), "product module %s requires %s, which only tooling needs", m.dir, r)
		}
		if testing.Short() {
			continue
		}
		// The whole module graph too: what the module's dependencies require.
		cmd := exec.CommandContext(t.Context(), "go", "list", "-m", "all")
		cmd.Dir = filepath.Join(repotest.Root(t), m.dir)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		require.NoErrorf(t, err, "go list -m all in %s:\n%s", m.dir, out)
		for l := range strings.Lines(string(out)) {
			if f := strings.Fields(l); len(f) > 0 && f[0] != path {
				require.Falsef(t, forbidden(f[0]), "product module %s has %s in its module graph", m.dir, f[0])
			}
		}
	}
	require.Contains(t, product, "services/standalone", "the product modules were not found")
}

// The repository's own modules form no cycle, also through the modules
// their tests need (a go.mod lists those too): a cycle ties the modules'
// versions together and makes each need the others to build.
func TestNoModuleCycle(t *testing.T) {
	mods := repoModules(t, repotest.Root(t))
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(m string)
	visit = func(m string) {
		state[m] = onPath
		path = append(path, mods[m].dir)
		for _, r := range mods[m].requires {
			if _, ok := mods[r]; !ok {
				continue // not one of ours
			}
			switch state[r] {
			case onPath:
				t.Fatalf("module cycle: %s -> %s", strings.Join(path, " -> "), mods[r].dir)
			case unseen:
				visit(r)
			}
		}
		path = path[:len(path)-1]
		state[m] = done
	}
	for m := range mods {
		if state[m] == unseen {
			visit(m)
		}
	}
}
