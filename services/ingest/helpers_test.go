package ingest_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/repotest"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func listInput(bucket string) *s3.ListObjectsV2Input { return &s3.ListObjectsV2Input{Bucket: &bucket} }

// sharedDir returns ../shared/<parts...> relative to the repository root.
// Without it (a plain clone) the test is skipped, except under CI=true.
func sharedDir(t *testing.T, parts ...string) string { return repotest.Shared(t, parts...) }
