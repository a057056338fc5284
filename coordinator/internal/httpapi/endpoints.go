package httpapi

// One go-kit endpoint per operation: each adapts a decoded request to one
// service call and returns the result for the route's encoder. They know
// nothing of HTTP; status codes are chosen by the encoders.

import (
	"context"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// healthResponse carries the status Admin.Health chose.
type healthResponse struct {
	body   api.Health
	status int
}

// putConfigResponse tells the encoder whether PUT config created.
type putConfigResponse struct {
	info    api.ConnectorInfo
	created bool
}

func makeServerInfo(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		return svc.ServerInfo(ctx)
	}
}

func makeHealth(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		body, status := svc.Health(ctx)
		return healthResponse{body: body, status: status}, nil
	}
}

func makeListConnectors(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(listRequest)
		if !req.expand {
			names, err := svc.ListConnectors(ctx)
			return nonNil(names), err
		}
		m, err := svc.ExpandConnectors(ctx, req.status, req.info)
		out := make(map[string]api.ConnectorExpanded, len(m)) // the service's map is not ours to edit
		for k, e := range m {
			if e.Info != nil {
				info := fixInfo(*e.Info)
				e.Info = &info
			}
			if e.Status != nil {
				st := fixState(*e.Status)
				e.Status = &st
			}
			out[k] = e
		}
		return out, err
	}
}

func makeCreateConnector(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		created, err := svc.CreateConnector(ctx, request.(api.CreateConnectorRequest))
		created.ConnectorInfo = fixInfo(created.ConnectorInfo)
		return created, err
	}
}

func makeGetConnector(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		info, err := svc.GetConnector(ctx, request.(nameRequest).name)
		return fixInfo(info), err
	}
}

func makeGetConnectorConfig(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		config, err := svc.GetConnectorConfig(ctx, request.(nameRequest).name)
		return nonNilMap(config), err
	}
}

func makePutConnectorConfig(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(putConfigRequest)
		info, created, err := svc.PutConnectorConfig(ctx, req.name, req.config)
		return putConfigResponse{info: fixInfo(info), created: created}, err
	}
}

func makePatchConnectorConfig(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(patchConfigRequest)
		info, err := svc.PatchConnectorConfig(ctx, req.name, req.patch)
		return fixInfo(info), err
	}
}

func makeConnectorStatus(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		st, err := svc.ConnectorStatus(ctx, request.(nameRequest).name)
		return fixState(st), err
	}
}

func makeTaskConfigs(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		tasks, err := svc.TaskConfigs(ctx, request.(nameRequest).name)
		out := make([]api.TaskInfo, len(tasks))
		for i, t := range tasks {
			t.Config = nonNilMap(t.Config)
			out[i] = t
		}
		return out, err
	}
}

func makeTaskStatus(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(taskRequest)
		return svc.TaskStatus(ctx, req.name, req.task)
	}
}

// makeNameAction adapts the void operations on one connector (stop, pause,
// resume on Connectors, topics reset on Runtime).
func makeNameAction[S any](call func(S, context.Context, string) error) func(S) endpoint.Endpoint {
	return func(svc S) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			return nil, call(svc, ctx, request.(nameRequest).name)
		}
	}
}

func makeRestartConnector(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(restartRequest)
		st, err := svc.RestartConnector(ctx, req.name, req.includeTasks, req.onlyFailed)
		if st != nil {
			fixed := fixState(*st)
			st = &fixed
		}
		return st, err
	}
}

func makeRestartTask(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(taskRequest)
		return nil, svc.RestartTask(ctx, req.name, req.task)
	}
}

func makeDeleteConnector(svc Connectors) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(deleteRequest)
		return nil, svc.DeleteConnector(ctx, req.name, req.resetOffsets)
	}
}

func makeConnectorTopics(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		topics, err := svc.ConnectorTopics(ctx, request.(nameRequest).name)
		out := make(map[string]api.ActiveTopics, len(topics))
		for k, t := range topics {
			t.Topics = nonNil(t.Topics)
			out[k] = t
		}
		return out, err
	}
}

func makeListPlugins(svc Plugins) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		plugins, err := svc.ListPlugins(ctx, request.(pluginsRequest).connectorsOnly)
		return nonNil(plugins), err
	}
}

func makePluginConfig(svc Plugins) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(pluginRequest)
		keys, err := svc.PluginConfig(ctx, req.plugin, req.version)
		return nonNil(keys), err
	}
}

func makeValidateConfig(svc Plugins) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(validateRequest)
		return svc.ValidateConfig(ctx, req.plugin, req.config)
	}
}

func makeGetOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		offsets, err := svc.GetOffsets(ctx, request.(nameRequest).name)
		offsets.Offsets = nonNil(offsets.Offsets)
		return offsets, err
	}
}

func makeAlterOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(alterOffsetsRequest)
		return svc.AlterOffsets(ctx, req.name, req.offsets)
	}
}

func makeResetOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.ResetOffsets(ctx, request.(nameRequest).name)
	}
}

// The fix and nonNil helpers keep the JSON shapes of spec §2 when a service
// leaves a list or map nil: clients read "tasks":[] (a STOPPED connector has
// exactly that), never null.

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func fixInfo(info api.ConnectorInfo) api.ConnectorInfo {
	info.Config = nonNilMap(info.Config)
	info.Tasks = nonNil(info.Tasks)
	return info
}

func fixState(st api.ConnectorStateInfo) api.ConnectorStateInfo {
	st.Tasks = nonNil(st.Tasks)
	return st
}
