package template

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files lists the template files under dir, recursively, in lexical order:
// every *.yml, *.yaml and *.json, skipping NAME.samples folders (a
// template's samples, not templates). Every reader of a templates folder
// (Load, the start-up sync, intakectl) walks it through here, so they agree
// on what a template file is.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasSuffix(d.Name(), SamplesSuffix) {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yml", ".yaml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("template: list %s: %w", dir, err)
	}
	return files, nil
}
