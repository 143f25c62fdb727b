package pdftext

import (
	"context"
	"fmt"
)

// ExtractRegion of the OCR engine is written on the OCR branch (issue 11,
// OCR by the same rectangle); until that merges, a crop of an OCR-only
// engine is unavailable rather than silently the whole page.
func (e *ocrEngine) ExtractRegion(context.Context, []byte, Region) (*Text, error) {
	return nil, fmt.Errorf("ocr: region: %w", ErrUnavailable)
}
