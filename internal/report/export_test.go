package report

// UpdateGolden is the -update flag (build_test.go), for the golden files
// of the tests outside the package.
var UpdateGolden = update
