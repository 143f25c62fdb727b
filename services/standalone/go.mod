module github.com/docintake/docintake/services/standalone

go 1.26.8

require github.com/compose-spec/compose-go/v2 v2.9.0 // indirect
