package pdftext

import (
	"bytes"
	"encoding/binary"
	"errors"
	_ "unsafe" // go:linkname

	_ "github.com/klippa-app/go-pdfium/webassembly" // owner of pdfiumWasm
)

// pdfiumWasm is go-pdfium's embedded module. We read it to lower the
// maximum its memory section declares (32768 pages, 2 GiB) to our cap:
// wazero can then reserve the whole capped memory once
// (WithMemoryCapacityFromMax) instead of growing it by copying. Growing by
// copying kept several generations alive: a flate bomb under a 256 MiB cap
// peaked at 1 GiB RSS and took 8 s; with the reservation it stays at the
// cap. go-pdfium offers no accessor; Config.WASM takes the patched copy.
//
//go:linkname pdfiumWasm github.com/klippa-app/go-pdfium/webassembly.pdfiumWasm
var pdfiumWasm []byte

// withMemoryMax returns a copy of the wasm binary whose (single) memory
// declares the given maximum in pages. The memory section is rewritten;
// every other section is copied as is.
func withMemoryMax(wasm []byte, maxPages uint32) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, errors.New("not a wasm module")
	}
	out := append([]byte(nil), wasm[:8]...)
	r := wasm[8:]
	found := false
	for len(r) > 0 {
		id := r[0]
		size, n := binary.Uvarint(r[1:])
		if n <= 0 || uint64(len(r)-1-n) < size {
			return nil, errors.New("truncated section")
		}
		body := r[1+n : 1+n+int(size)]
		r = r[1+n+int(size):]
		if id == 5 { // memory section: vec(limits)
			nb, err := rewriteMemory(body, maxPages)
			if err != nil {
				return nil, err
			}
			body, found = nb, true
		}
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	if !found {
		return nil, errors.New("no memory section")
	}
	return out, nil
}

func rewriteMemory(body []byte, maxPages uint32) ([]byte, error) {
	count, n := binary.Uvarint(body)
	if n <= 0 || count != 1 || len(body) < n+1 {
		return nil, errors.New("want exactly one memory")
	}
	flags := body[n]
	rest := body[n+1:]
	min, m := binary.Uvarint(rest)
	if m <= 0 || flags > 1 {
		return nil, errors.New("unsupported memory limits")
	}
	if min > uint64(maxPages) {
		return nil, errors.New("memory minimum above the cap")
	}
	out := binary.AppendUvarint(nil, 1)
	out = append(out, 1) // limits with a maximum
	out = binary.AppendUvarint(out, min)
	out = binary.AppendUvarint(out, uint64(maxPages))
	return out, nil
}
