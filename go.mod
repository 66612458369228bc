module github.com/jadevm/jade

go 1.26.8

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/sys v0.50.0
)

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
