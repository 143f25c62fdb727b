//go:build race

package pdftext

// raceEnabled: the race detector shadows every Go allocation, the wasm
// linear memory included, so RSS measurements mean nothing under -race.
const raceEnabled = true
