package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// FS is a Store on a local directory, used by the standalone system. Objects
// are plain files under the root; the content type is not kept.
type FS struct {
	root string
}

var _ Store = (*FS)(nil)

// NewFS returns a store rooted at dir, creating the directory if needed. The
// path is made absolute so that URIs stay valid when the working directory
// changes.
func NewFS(dir string) (*FS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("object store dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("object store dir: %w", err)
	}
	return &FS{root: abs}, nil
}

// Root returns the absolute root directory.
func (s *FS) Root() string { return s.root }

func (s *FS) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// Put writes the body to a temporary file next to the target, fsyncs it,
// renames it into place and fsyncs the directory, so that after Put returns
// the object survives a crash and readers never see a partial file.
func (s *FS) Put(ctx context.Context, key string, r io.Reader, size int64, _ string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	target := s.path(key)
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return wrapErr("put", key, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return wrapErr("put", key, err)
	}
	tmp := f.Name()
	defer func() {
		if tmp != "" { // not renamed into place: leave nothing behind
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	n, err := io.Copy(f, contextReader{ctx: ctx, r: r})
	if err != nil {
		return wrapErr("put", key, err)
	}
	if size >= 0 && n != size {
		return sizeMismatch(key, size, n)
	}
	if err := f.Sync(); err != nil {
		return wrapErr("put", key, err)
	}
	if err := f.Close(); err != nil {
		return wrapErr("put", key, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return wrapErr("put", key, err)
	}
	tmp = ""
	if err := syncDir(dir); err != nil {
		return wrapErr("put", key, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get opens the object's file. ENOTFOUND when it does not exist.
func (s *FS) Get(_ context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(key, err)
	}
	if err != nil {
		return nil, wrapErr("get", key, err)
	}
	if st, err := f.Stat(); err != nil || st.IsDir() {
		_ = f.Close()
		return nil, notFound(key, err)
	}
	return f, nil
}

// Delete removes the object's file; empty parent directories are left in
// place because removing them would race with concurrent Puts.
func (s *FS) Delete(_ context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := os.Remove(s.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapErr("delete", key, err)
	}
	return nil
}

// Ping checks that the root is still an accessible directory.
func (s *FS) Ping(context.Context) error {
	st, err := os.Stat(s.root)
	if err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("object store: %s is not a directory", s.root)
	}
	return nil
}

// URI returns "file:///abs/path/to/key".
func (s *FS) URI(key string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.path(key))}).String()
}

// contextReader stops a long copy once ctx is done, so a cancelled request
// does not keep writing to disk.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
