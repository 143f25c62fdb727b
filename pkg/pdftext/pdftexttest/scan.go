package pdftexttest

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

// Scan returns an image-only copy of pdf, as a scanner or fax would make
// it: every page rendered by poppler's pdftoppm at dpi in grey and embedded
// as a JPEG filling a page of the original size, with no text layer. It
// needs pdfinfo and pdftoppm (poppler-utils) on PATH.
func Scan(pdf []byte, dpi int) ([]byte, error) {
	dir, err := os.MkdirTemp("", "pdftexttest-scan-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		return nil, err
	}
	info, err := exec.Command("pdfinfo", in).Output()
	if err != nil {
		return nil, fmt.Errorf("pdfinfo: %w", err)
	}
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindSubmatch(info)
	if m == nil {
		return nil, fmt.Errorf("pdfinfo printed no page count")
	}
	n, _ := strconv.Atoi(string(m[1]))
	pages := make([]Page, n)
	for i := range pages {
		p := strconv.Itoa(i + 1)
		out, err := exec.Command("pdftoppm", "-r", strconv.Itoa(dpi), "-gray", "-png", "-f", p, "-l", p, in).Output()
		if err != nil {
			return nil, fmt.Errorf("pdftoppm page %s: %w", p, err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			return nil, fmt.Errorf("decode page %s: %w", p, err)
		}
		b := img.Bounds()
		w, h := float64(b.Dx())*72/float64(dpi), float64(b.Dy())*72/float64(dpi)
		pages[i] = Page{Width: w, Height: h, Images: []Image{{W: w, H: h, Img: gray(img)}}}
	}
	return Build(pages...), nil
}

// gray returns img as *image.Gray so Build embeds it as a DeviceGray JPEG.
func gray(img image.Image) *image.Gray {
	if g, ok := img.(*image.Gray); ok {
		return g
	}
	b := img.Bounds()
	g := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g.Set(x, y, img.At(x, y))
		}
	}
	return g
}
