package ingest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func listInput(bucket string) *s3.ListObjectsV2Input { return &s3.ListObjectsV2Input{Bucket: &bucket} }

// sharedDir returns ../shared/<parts...> relative to the repository root.
// Without it (a plain clone) the test is skipped, except under CI=true.
func sharedDir(t *testing.T, parts ...string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			p := filepath.Join(append([]string{dir, "..", "shared"}, parts...)...)
			if _, err := os.Stat(p); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is missing; CI needs ../shared beside the repository", p)
				}
				t.Skipf("%s not found: the shared corpus lives beside the repository (../shared); skipping", p)
			}
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("go.work not found above " + wd)
		}
	}
}
