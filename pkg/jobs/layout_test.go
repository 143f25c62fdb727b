package jobs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
)

// subjectOrMsgID matches a string that spells a job subject, a subject
// filter or a dedup id: ".process.", "intake.deliver.", ".process.>",
// "%s:process:%d", "deliver:%s". Prose (with spaces) is not a subject.
var subjectOrMsgID = regexp.MustCompile(`\.(process|deliver)(\.|$)|^(process|deliver)\.|:process:|^deliver:`)

const jobspbPath = "github.com/docintake/docintake/pkg/jobspb"

// TestOnlyJobsBuildsJobs fails when a non-test Go file outside pkg/jobs (and
// the generated pkg/jobspb) builds a job message (a jobspb.ProcessJob or
// DeliverJob literal, or proto.Marshal in a file that imports jobspb), or
// spells a subject, subject filter or dedup id in a string literal: those
// are pkg/jobs' functions, so a format cannot drift between publishers.
func TestOnlyJobsBuildsJobs(t *testing.T) {
	t.Parallel()
	root := repotest.Root(t)
	own := []string{filepath.Join(root, "pkg", "jobs"), filepath.Join(root, "pkg", "jobspb")}
	var bad []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") ||
				p == own[0] || p == own[1] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		found, err := jobBuilding(p, rel)
		bad = append(bad, found...)
		return err
	})
	require.NoError(t, err)
	require.Empty(t, bad, "build job messages, subjects and dedup ids with pkg/jobs")
}

// jobBuilding returns where in file p (rel from the repository root) a job
// message is built or a subject or dedup id spelled.
func jobBuilding(p, rel string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	pb, protoName := "", ""
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		switch path {
		case jobspbPath:
			pb = name
		case "google.golang.org/protobuf/proto":
			protoName = name
		}
	}
	var found []string
	at := func(n ast.Node) string { return rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) + ": " }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING &&
				!strings.ContainsAny(s, " \t\r\n") && subjectOrMsgID.MatchString(s) {
				found = append(found, at(n)+"literal "+n.Value)
			}
		case *ast.CompositeLit:
			if x, ok := n.Type.(*ast.SelectorExpr); ok && isIdent(x.X, pb) && pb != "" {
				found = append(found, at(n)+pb+"."+x.Sel.Name+" literal")
			}
		case *ast.CallExpr:
			if x, ok := n.Fun.(*ast.SelectorExpr); ok && pb != "" && protoName != "" &&
				isIdent(x.X, protoName) && strings.HasPrefix(x.Sel.Name, "Marshal") {
				found = append(found, at(n)+protoName+"."+x.Sel.Name)
			}
		}
		return true
	})
	return found, nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
