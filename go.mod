module github.com/jadevm/jade

go 1.26.8
