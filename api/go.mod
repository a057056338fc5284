module github.com/sluice-io/sluice/api

go 1.26.8
