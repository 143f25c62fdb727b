package template

var mappableFields = map[string]bool{}
