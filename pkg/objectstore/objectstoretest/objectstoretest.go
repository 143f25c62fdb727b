// Package objectstoretest gives tests a real S3 server: each test gets its
// own bucket on a versitygw gateway.
//
// When INTAKE_TEST_S3_ENDPOINT is set, that server is used (credentials from
// INTAKE_TEST_S3_ACCESS_KEY / INTAKE_TEST_S3_SECRET_KEY, default
// "test"/"testsecret"). Otherwise one versitygw process per test binary is
// started on a free loopback port with a temporary posix directory. The
// binary is looked up in $INTAKE_VERSITYGW, $PATH, $(go env GOPATH)/bin and
// $HOME/.cache/docintake-bin; install it with
//
//	GOBIN=$HOME/.cache/docintake-bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
//
// Without a server the tests skip, unless CI=true, where they fail. With
// -short they always skip.
//
// The gateway is killed when the test binary exits: on Linux through the
// parent-death signal, everywhere through Main (use it from TestMain).
package objectstoretest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"go.uber.org/goleak"

	"github.com/docintake/docintake/pkg/objectstore"
)

// Credentials of the gateway this package starts.
const (
	accessKey = "test"
	secretKey = "testsecret"
)

// server is the S3 endpoint shared by all tests of one binary.
type server struct {
	endpoint, access, secret string

	proc   *os.Process // nil for an external server or once stopped
	exited chan error  // receives the process's Wait result
	dir    string
}

var (
	serverOnce sync.Once
	shared     *server
	sharedErr  error // why there is no server; skip or fail with it
	sharedMu   sync.Mutex
)

// Main runs the tests, stops the gateway this package may have started and,
// after a green run, checks for leaked goroutines with goleak. Use it as
//
//	func TestMain(m *testing.M) { objectstoretest.Main(m) }
//
// regexp2's clock goroutine is no leak: templates' backtracking matches
// start it and it ends by itself about a second after the last one.
func Main(m *testing.M, leakOpts ...goleak.Option) {
	code := m.Run()
	Stop()
	if code == 0 {
		leakOpts = append(leakOpts, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
		if err := goleak.Find(leakOpts...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Stop kills the gateway started by this package, if any, and removes its
// data. Safe to call more than once.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil || shared.proc == nil {
		return
	}
	_ = shared.proc.Kill()
	<-shared.exited
	_ = os.RemoveAll(shared.dir)
	shared.proc = nil
}

// S3Config creates a fresh bucket named after the test and returns the
// configuration that reaches it (path-style, static credentials). The bucket
// and everything in it are deleted when the test ends.
func S3Config(t testing.TB) objectstore.S3Config {
	t.Helper()
	srv := sharedServer(t)
	cfg := objectstore.S3Config{
		Endpoint:  srv.endpoint,
		Region:    "us-east-1",
		Bucket:    BucketName(t.Name()),
		AccessKey: srv.access,
		SecretKey: srv.secret,
		PathStyle: true,
	}
	admin := newStore(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.EnsureBucket(ctx); err != nil {
		t.Fatalf("objectstoretest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := deleteBucket(ctx, admin.Client(), cfg.Bucket); err != nil {
			t.Errorf("objectstoretest: delete bucket %s: %v", cfg.Bucket, err)
		}
	})
	return cfg
}

// virtualDomain is the domain under which the gateway this package starts
// serves buckets by host name.
const virtualDomain = "localhost"

// VirtualHostConfig is S3Config with virtual-hosted addressing: requests go
// to http://<bucket>.localhost:port/key, and the HTTP client dials the
// gateway whatever the host name, so no resolver needs to know it. Only the
// gateway this package starts serves such requests: with
// INTAKE_TEST_S3_ENDPOINT the test is skipped.
func VirtualHostConfig(t testing.TB) objectstore.S3Config {
	t.Helper()
	cfg := S3Config(t)
	if sharedServer(t).dir == "" {
		t.Skip("objectstoretest: virtual-hosted addressing needs the gateway this package starts")
	}
	gateway := strings.TrimPrefix(cfg.Endpoint, "http://")
	_, port, err := net.SplitHostPort(gateway)
	if err != nil {
		t.Fatalf("objectstoretest: endpoint %s: %v", cfg.Endpoint, err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, gateway)
	}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.Endpoint = "http://" + net.JoinHostPort(virtualDomain, port)
	cfg.PathStyle = false
	cfg.HTTPClient = &http.Client{Transport: tr}
	return cfg
}

// S3 returns a store on a fresh bucket of its own (see S3Config).
func S3(t testing.TB) *objectstore.S3 {
	t.Helper()
	return newStore(t, S3Config(t))
}

// newStore builds a store whose idle connections are closed at cleanup, so
// that goleak does not see the transport's goroutines.
func newStore(t testing.TB, cfg objectstore.S3Config) *objectstore.S3 {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	cfg.HTTPClient = &http.Client{Transport: tr}
	st, err := objectstore.NewS3(cfg)
	if err != nil {
		t.Fatalf("objectstoretest: %v", err)
	}
	return st
}

// BucketName derives a valid, unique S3 bucket name from a test name:
// lowercase letters, digits and dashes, at most 63 characters, ending in a
// random suffix.
func BucketName(testName string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(testName) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	if name == "" {
		name = "test"
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return name + "-" + hex.EncodeToString(rnd[:])
}

// deleteBucket empties the bucket (objects and unfinished multipart uploads)
// and deletes it.
func deleteBucket(ctx context.Context, c *s3.Client, bucket string) error {
	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		return fmt.Errorf("list uploads: %w", err)
	}
	for _, u := range uploads.Uploads {
		if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId,
		}); err != nil {
			return fmt.Errorf("abort upload: %w", err)
		}
	}
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list objects: %w", err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		// One DeleteObjects per listed page (up to 1000 keys): benchmarks
		// leave tens of thousands of objects behind.
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return fmt.Errorf("delete objects: %w", err)
		}
		if len(out.Errors) > 0 {
			return fmt.Errorf("delete %s: %s", aws.ToString(out.Errors[0].Key), aws.ToString(out.Errors[0].Message))
		}
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}

// sharedServer returns the binary's S3 server, starting versitygw on first
// use, or ends the test (skip, or fail under CI=true).
func sharedServer(t testing.TB) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("objectstoretest: S3 tests skipped with -short")
	}
	serverOnce.Do(func() {
		s, err := startServer()
		sharedMu.Lock()
		shared, sharedErr = s, err
		sharedMu.Unlock()
	})
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("objectstoretest: %v", sharedErr)
		}
		t.Skipf("objectstoretest: %v", sharedErr)
	}
	if shared.proc == nil && shared.dir != "" {
		t.Fatal("objectstoretest: gateway already stopped")
	}
	return shared
}

func startServer() (*server, error) {
	if ep := os.Getenv("INTAKE_TEST_S3_ENDPOINT"); ep != "" {
		return &server{
			endpoint: ep,
			access:   cmp.Or(os.Getenv("INTAKE_TEST_S3_ACCESS_KEY"), accessKey),
			secret:   cmp.Or(os.Getenv("INTAKE_TEST_S3_SECRET_KEY"), secretKey),
		}, nil
	}
	bin, err := findVersitygw()
	if err != nil {
		return nil, err
	}
	// A port picked here can be taken by someone else before the gateway
	// binds it; try a few times.
	var lastErr error
	for range 3 {
		s, err := launch(bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// findVersitygw looks for the gateway binary in the documented places.
func findVersitygw() (string, error) {
	if p := os.Getenv("INTAKE_VERSITYGW"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("INTAKE_VERSITYGW=%s is not an executable file", p)
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var candidates []string
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for gp := range strings.SplitSeq(strings.TrimSpace(string(out)), string(os.PathListSeparator)) {
			if gp != "" {
				candidates = append(candidates, filepath.Join(gp, "bin", "versitygw"))
			}
		}
	}
	if dir, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "docintake-bin", "versitygw"))
	}
	for _, p := range candidates {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no S3 server: set INTAKE_TEST_S3_ENDPOINT or install versitygw "+
		"(GOBIN=$HOME/.cache/docintake-bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); looked in $PATH and %s",
		strings.Join(candidates, ", "))
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// launch starts versitygw on a free loopback port and waits until it accepts
// connections.
func launch(bin string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "docintake-versitygw-*")
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	// --virtual-domain serves http://<bucket>.localhost:port/ as well as
	// path-style requests (VirtualHostConfig).
	cmd := exec.Command(bin, "--access", accessKey, "--secret", secretKey, "--port", addr, "--keep-alive", "--quiet",
		"--virtual-domain", virtualDomain, "posix", dir)
	var stderr strings.Builder
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("versitygw exited at start (%v): %s", err, stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			_ = os.RemoveAll(dir)
			return nil, errors.New("versitygw did not accept connections within 30s")
		case <-tick.C:
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				continue
			}
			_ = conn.Close()
			return &server{
				endpoint: "http://" + addr, access: accessKey, secret: secretKey,
				proc: cmd.Process, exited: exited, dir: dir,
			}, nil
		}
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}
