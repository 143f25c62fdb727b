module github.com/docintake/docintake/services/pogen

go 1.26.8

require github.com/go-pdf/fpdf v0.9.0
