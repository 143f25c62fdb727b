module github.com/docintake/docintake/services/dispatcher

go 1.26.8
