package mailbox

import (
	"context"
	"net/url"

	"go.uber.org/zap"
)

// checkGraph is Check for a Graph mailbox: a token by client credentials
// and the folders' counts, nothing created or moved.
func checkGraph(ctx context.Context, mb Mailbox, getenv func(string) string) (CheckReport, error) {
	c := newGraphClient(*mb.Graph, getenv, zap.NewNop())
	rep := CheckReport{Server: c.base, Username: mb.Graph.User}
	for _, f := range []struct{ role, name string }{
		{"folder", mb.Folder}, {"processed_folder", mb.ProcessedFolder}, {"error_folder", mb.ErrorFolder}} {
		cf := CheckFolder{Role: f.role, Name: f.name}
		id, ok, err := c.lookupFolder(ctx, f.name)
		if err != nil {
			return rep, err
		}
		if ok {
			var counts struct {
				Total  uint32 `json:"totalItemCount"`
				Unread uint32 `json:"unreadItemCount"`
			}
			q := url.Values{"$select": {"totalItemCount,unreadItemCount"}}
			if err := c.getJSON(ctx, c.userURL("/mailFolders/"+url.PathEscape(id)+"?"+q.Encode()), &counts); err != nil {
				return rep, err
			}
			cf.Exists, cf.Messages, cf.Unseen = true, counts.Total, counts.Unread
		}
		rep.Folders = append(rep.Folders, cf)
	}
	return rep, nil
}
