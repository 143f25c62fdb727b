package objectstore

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Object is one stored object as a listing sees it.
type Object struct {
	Key      string
	Modified time.Time
}

// List calls fn for every object whose key starts with prefix, in key
// order, page by page (the listing is never held whole); fn's error stops
// it.
func (s *S3) List(ctx context.Context, prefix string, fn func(Object) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return wrapErr("list", prefix, err)
		}
		for _, o := range page.Contents {
			if err := fn(Object{Key: aws.ToString(o.Key), Modified: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// List calls fn for every object whose key starts with prefix; fn's error
// stops it. Files being written (Put's temporary files) are not objects.
func (s *FS) List(ctx context.Context, prefix string, fn func(Object) error) error {
	// Walk the deepest directory the prefix names in full.
	dir := s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) || ValidKey(key) != nil {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(Object{Key: key, Modified: info.ModTime()})
	})
	if err != nil {
		return wrapErr("list", prefix, err)
	}
	return nil
}
