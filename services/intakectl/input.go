package intakectl

import (
	"encoding/csv"
	"io"
	"os"
)

// openInput opens a file given on the command line, "-" being standard
// input; done closes it (and leaves standard input open).
func openInput(path string, env Env) (r io.Reader, done func(), err error) {
	if path == "-" {
		return env.Stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil
}

// openCSV reads a CSV file given on the command line ("-" is standard
// input) with rows of any length and leading spaces trimmed; done closes it.
func openCSV(path string, env Env) (cr *csv.Reader, done func(), err error) {
	r, done, err := openInput(path, env)
	if err != nil {
		return nil, nil, err
	}
	cr = csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	return cr, done, nil
}
