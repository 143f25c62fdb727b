module github.com/docintake/docintake/services/intakectl

go 1.26.8
