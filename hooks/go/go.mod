module github.com/spanprof/spanprof/hooks/go

go 1.19

require (
	go.opentelemetry.io/otel v1.1.0
	go.opentelemetry.io/otel/sdk v1.1.0
	go.opentelemetry.io/otel/trace v1.1.0
)

require golang.org/x/sys v0.0.0-20211102192858-4dd72447c267 // indirect
