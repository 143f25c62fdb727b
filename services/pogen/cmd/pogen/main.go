// Command pogen writes generated purchase orders and their truth:
// DIR/po-<seed>.pdf and DIR/po-<seed>.json for seeds seed .. seed+n-1.
//
//	go run ./cmd/pogen -seed 1 -n 500 -out DIR
//
// With -score it writes nothing and scores the template-less reader
// (pkg/generic) on those seeds instead, over pdftotext -layout: orders
// delivered right and wrong, negatives delivered, the share per layout
// feature and the rejections by reason (BENCHMARKS.md records it).
//
//	go run ./cmd/pogen -score -seed 10001 -n 1000
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/docintake/docintake/services/pogen"
)

func main() {
	seed := flag.Int64("seed", 1, "first seed")
	n := flag.Int("n", 1, "number of documents")
	out := flag.String("out", ".", "output directory")
	score := flag.Bool("score", false, "score the generic reader on the seeds instead of writing files")
	flag.Parse()
	var err error
	if *score {
		err = runScore(*seed, *n)
	} else {
		err = run(*seed, *n, *out)
	}
	if err != nil {
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

func runScore(seed int64, n int) error {
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = seed + int64(i)
	}
	text := func(ctx context.Context, pdf []byte) (string, error) {
		cmd := exec.CommandContext(ctx, "pdftotext", "-layout", "-", "-")
		cmd.Stdin = bytes.NewReader(pdf)
		out, err := cmd.Output()
		return string(out), err
	}
	start := time.Now()
	s, err := pogen.ScoreReader(context.Background(), seeds, text)
	if err != nil {
		return err
	}
	fmt.Printf("go run ./cmd/pogen -score -seed %d -n %d (%s)\n", seed, n, time.Since(start).Round(time.Second))
	s.Write(os.Stdout)
	if s.Wrong > 0 || s.NegDelivered > 0 {
		return fmt.Errorf("%d orders delivered wrong, %d negatives delivered", s.Wrong, s.NegDelivered)
	}
	return nil
}
