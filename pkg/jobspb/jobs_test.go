package jobspb_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/docintake/docintake/pkg/jobspb"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	in := &jobspb.DeliverJob{
		LogId: "L1", DocumentId: "0195a1c2-0000-7000-8000-000000000001", ClientId: "acme",
		State: "processed_success", Status: "success", DeliveryId: "msg_1", Attempt: 2,
		EnqueuedAt: timestamppb.New(at),
	}
	b, err := proto.Marshal(in)
	require.NoError(t, err)
	var out jobspb.DeliverJob
	require.NoError(t, proto.Unmarshal(b, &out))
	require.True(t, proto.Equal(in, &out))
	require.Equal(t, at, out.GetEnqueuedAt().AsTime())
}

// TestGeneratedUpToDate regenerates jobs.pb.go with protoc and the
// protoc-gen-go of go.mod and compares it with the committed file. Skips
// when protoc or the well-known .proto files are not installed.
func TestGeneratedUpToDate(t *testing.T) {
	t.Parallel()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (apt-get install protobuf-compiler libprotobuf-dev); cannot check generated code")
	}
	const wkt = "/usr/include"
	if _, err := os.Stat(filepath.Join(wkt, "google/protobuf/timestamp.proto")); err != nil {
		t.Skip("well-known .proto files not installed (apt-get install libprotobuf-dev)")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	repo := wd
	for {
		if _, err := os.Stat(filepath.Join(repo, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(repo)
		require.NotEqual(t, parent, repo, "go.work not found above %s", wd)
		repo = parent
	}

	tmp := t.TempDir()
	plugin := filepath.Join(tmp, "protoc-gen-go")
	build := exec.Command("go", "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build protoc-gen-go: %s", out)

	gen := exec.Command(protoc, "-I", filepath.Join(repo, "proto"), "-I", wkt,
		"--plugin=protoc-gen-go="+plugin,
		"--go_out="+tmp, "--go_opt=module=github.com/docintake/docintake/pkg",
		filepath.Join(repo, "proto/docintake/v1/jobs.proto"))
	out, err = gen.CombinedOutput()
	require.NoError(t, err, "protoc: %s", out)

	want, err := os.ReadFile(filepath.Join(tmp, "jobspb/jobs.pb.go"))
	require.NoError(t, err)
	got, err := os.ReadFile("jobs.pb.go")
	require.NoError(t, err)
	// The protoc version in the header differs between machines and does
	// not change the code.
	protocLine := regexp.MustCompile(`(?m)^// \tprotoc +v.*$`)
	want = protocLine.ReplaceAll(want, nil)
	got = protocLine.ReplaceAll(got, nil)
	require.True(t, bytes.Equal(want, got), "pkg/jobspb/jobs.pb.go is stale: run make proto (proto/gen.sh)")
}
