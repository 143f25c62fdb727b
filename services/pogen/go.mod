module github.com/docintake/docintake/services/pogen

go 1.26.8

require github.com/go-pdf/fpdf v0.9.0

require github.com/docintake/docintake/pkg v0.0.0

require (
	github.com/dlclark/regexp2 v1.12.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/docintake/docintake/pkg => ../../pkg
