package pdftexttest

import (
	"image"
	"image/color"
	"image/draw"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// TextImage draws lines of black text on white with the 7×13 bitmap font,
// scaled up by scale with Catmull-Rom interpolation (blocky nearest-neighbour
// pixels make tesseract read O as U; 4 gives glyphs about 40 px high), for
// scanned-page fixtures.
func TextImage(lines []string, scale int) *image.Gray {
	if scale < 1 {
		scale = 1
	}
	face := basicfont.Face7x13
	const margin, lineH = 10, 18
	width := 0
	for _, l := range lines {
		width = max(width, font.MeasureString(face, l).Ceil())
	}
	small := image.NewGray(image.Rect(0, 0, width+2*margin, len(lines)*lineH+2*margin))
	draw.Draw(small, small.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: small, Src: image.NewUniform(color.Black), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(margin, margin+(i+1)*lineH-5)
		d.DrawString(l)
	}
	b := small.Bounds()
	big := image.NewGray(image.Rect(0, 0, b.Dx()*scale, b.Dy()*scale))
	xdraw.CatmullRom.Scale(big, big.Bounds(), small, b, xdraw.Src, nil)
	return big
}
