package intakectl

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// Bounds of a .zip upload: what a supplier's archive of POs holds, with
// room to spare; a larger entry or archive is refused rather than read into
// memory.
const (
	maxZipEntryBytes = 64 << 20
	maxZipEntries    = 20000
)

// source is one PDF to upload: a file, or an entry of a .zip (data holds
// its bytes, name reads "archive.zip:dir/po.pdf").
type source struct {
	name string
	data []byte // nil: read the file name
}

// collectSources lists the PDFs to upload: named files as they are, every
// *.pdf (any case) below named directories in lexical order, and every
// *.pdf inside named or found *.zip archives (a supplier's mixed archive).
func collectSources(paths []string) ([]source, error) {
	var out []source
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			srcs, err := fileSources(p, true)
			if err != nil {
				return nil, err
			}
			out = append(out, srcs...)
			continue
		}
		err = filepath.WalkDir(p, func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return err
			}
			srcs, err := fileSources(path, false)
			out = append(out, srcs...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
	}
	return out, nil
}

// fileSources is the file p as sources: the PDFs of a .zip, the file
// itself when named (its content decides) or a *.pdf, else none.
func fileSources(p string, named bool) ([]source, error) {
	switch ext := strings.ToLower(filepath.Ext(p)); {
	case ext == ".zip":
		return zipSources(p)
	case named || ext == ".pdf":
		return []source{{name: p}}, nil
	}
	return nil, nil
}

// zipSources reads the *.pdf entries of the archive p (bounded by
// maxZipEntryBytes and maxZipEntries), in the archive's order.
func zipSources(p string) ([]source, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, fmt.Errorf("zip %s: %w", p, err)
	}
	defer zr.Close()
	if len(zr.File) > maxZipEntries {
		return nil, fmt.Errorf("zip %s: %d entries, more than %d", p, len(zr.File), maxZipEntries)
	}
	var out []source
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || !strings.EqualFold(path.Ext(f.Name), ".pdf") {
			continue
		}
		data, err := readZipEntry(f)
		if err != nil {
			return nil, fmt.Errorf("zip %s: %s: %w", p, f.Name, err)
		}
		out = append(out, source{name: p + ":" + f.Name, data: data})
	}
	return out, nil
}

func readZipEntry(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxZipEntryBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", f.UncompressedSize64, maxZipEntryBytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The header's size is the writer's word; the reader counts for itself.
	data, err := io.ReadAll(io.LimitReader(rc, maxZipEntryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxZipEntryBytes {
		return nil, fmt.Errorf("more than %d bytes", maxZipEntryBytes)
	}
	return data, nil
}

// open returns the source's content, seekable so the client can retry.
func (s source) open() (io.ReadSeekCloser, error) {
	if s.data != nil {
		return nopCloser{bytes.NewReader(s.data)}, nil
	}
	return os.Open(s.name)
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// baseName is the file name the service records: the file's, or the zip
// entry's.
func (s source) baseName() string {
	if s.data != nil {
		_, entry, _ := strings.Cut(s.name, ".zip:")
		return path.Base(entry)
	}
	return filepath.Base(s.name)
}

// messageID is "sha256:<hex of the content>".
func (s source) messageID() (string, error) {
	h := sha256.New()
	if s.data != nil {
		h.Write(s.data)
	} else {
		f, err := os.Open(s.name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("read %s: %w", s.name, err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// printTemplates prints, after --wait, how many documents each template
// read ("-" for none chosen): what routing made of a mixed archive.
func printTemplates(w io.Writer, docs []*uploadFile) {
	n := map[string]int{}
	for _, d := range docs {
		if d.logID != "" {
			n[dash(d.template)]++
		}
	}
	if len(n) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTEMPLATE\tDOCUMENTS")
	for _, t := range slices.Sorted(maps.Keys(n)) {
		fmt.Fprintf(tw, "%s\t%d\n", t, n[t])
	}
	_ = tw.Flush()
}
