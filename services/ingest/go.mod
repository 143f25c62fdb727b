module github.com/docintake/docintake/services/ingest

go 1.26.8
