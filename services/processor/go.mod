module github.com/docintake/docintake/services/processor

go 1.26.8
