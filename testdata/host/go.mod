module example.com/host

go 1.26.8

require github.com/jadevm/jade v0.0.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/jadevm/jade => ../..
