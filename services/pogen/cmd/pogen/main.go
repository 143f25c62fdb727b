// Command pogen writes generated purchase orders and their truth:
// DIR/po-<seed>.pdf and DIR/po-<seed>.json for seeds seed .. seed+n-1.
//
//	go run ./cmd/pogen -seed 1 -n 500 -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docintake/docintake/services/pogen"
)

func main() {
	seed := flag.Int64("seed", 1, "first seed")
	n := flag.Int("n", 1, "number of documents")
	out := flag.String("out", ".", "output directory")
	flag.Parse()
	if err := run(*seed, *n, *out); err != nil {
		fmt.Fprintln(os.Stderr, "pogen:", err)
		os.Exit(1)
	}
}

func run(seed int64, n int, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for s := seed; s < seed+int64(n); s++ {
		pdf, truth, err := pogen.Generate(s)
		if err != nil {
			return err
		}
		base := filepath.Join(dir, pogen.FileName(s))
		if err := os.WriteFile(base+".pdf", pdf, 0o644); err != nil {
			return err
		}
		js, err := json.MarshalIndent(truth, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
