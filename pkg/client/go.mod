module github.com/docintake/docintake/pkg/client

go 1.26.8
