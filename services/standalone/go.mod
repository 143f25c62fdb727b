module github.com/docintake/docintake/services/standalone

go 1.26.8
