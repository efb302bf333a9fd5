package stmtgen

// goType is the Go type of one name: as a #{bind} a statement takes and as
// a column it returns. A pointer bind is NULL when nil; a column's type is
// what its rows are scanned into (the engine's scanners where drivers
// differ: UUIDText, UTCTime; sql.Null* where the column may be NULL).
type goType struct {
	bind string
	col  string
}

// types is the one table of Go types: bind and column names, and for a
// column that a statement returns in another form, "statement.id column"
// (looked up first). A name of a spec missing here fails the generator.
var types = map[string]goType{
	"after":              {bind: "int64"},
	"after_sequence":     {bind: "int64"},
	"aggregate_id":       {bind: "string", col: "string"},
	"aggregate_type":     {bind: "string", col: "string"},
	"below":              {bind: "int64"},
	"cache_size":         {col: "int64"},
	"consumer_id":        {bind: "string", col: "string"},
	"consumer_name":      {bind: "string", col: "string"},
	"consumer_type":      {bind: "string", col: "string"},
	"count":              {bind: "int64", col: "int64"},
	"created_at":         {bind: "time.Time", col: "engine.UTCTime"},
	"cutoff":             {bind: "time.Time"},
	"database":           {col: "sql.NullString"},
	"end":                {col: "int64"},
	"epoch":              {bind: "*int64", col: "sql.NullInt64"},
	"epoch_floor":        {bind: "int64"},
	"event_revision":     {bind: "int", col: "int"},
	"event_type":         {bind: "string", col: "string"},
	"every_key":          {bind: "bool", col: "bool"},
	"expires_at":         {col: "engine.UTCTime"},
	"failure_count":      {bind: "int", col: "int"},
	"failure_reason":     {bind: "*string", col: "sql.NullString"},
	"from_count":         {bind: "int"},
	"from_state":         {bind: "string"},
	"from_status":        {bind: "string"},
	"generation":         {bind: "int64", col: "int64"},
	"global_position":    {bind: "int64", col: "int64"},
	"halt_reason":        {bind: "*string", col: "sql.NullString"},
	"high_water_mark":    {col: "int64"},
	"host_name":          {bind: "*string", col: "sql.NullString"},
	"id":                 {bind: "string", col: "string"},
	"incomplete_through": {col: "sql.NullInt64"},
	"instance_id":        {bind: "string", col: "string"},
	"is_live":            {col: "int"},
	"key_hash":           {bind: "int64"},
	"last_heartbeat":     {col: "engine.UTCTime"},
	"lease_millis":       {bind: "int64"},
	"lease_owner":        {col: "sql.NullString"},
	"limit":              {bind: "int"},
	"live":               {col: "int"},
	"mark":               {bind: "int64"},
	"message_copy":       {bind: "*string", col: "sql.NullString"},
	"message_key":        {bind: "*string", col: "sql.NullString"},
	"message_position":   {bind: "int64", col: "int64"},
	"metadata":           {bind: "*string", col: "[]byte"},
	"n":                  {col: "int64"},
	"next_retry_at":      {bind: "*time.Time", col: "engine.UTCTime"},
	"notified":           {col: "sql.NullString"},
	"now":                {col: "engine.UTCTime"},
	"occurred_at":        {bind: "time.Time", col: "engine.UTCTime"},
	"oldest":             {col: "sql.NullInt64"},
	"owner":              {bind: "string"},
	"partition":          {bind: "int"},
	"partition_key":      {bind: "int", col: "int64"},
	"partition_no":       {bind: "int", col: "int"},
	"partitions":         {bind: "int", col: "int"},
	"payload":            {bind: "string", col: "[]byte"},
	"pending_end":        {bind: "int64", col: "sql.NullInt64"},
	"pending_horizon":    {bind: "int64", col: "sql.NullInt64"},
	"position":           {bind: "int64", col: "sql.NullInt64"},
	"recorded_at":        {bind: "*time.Time", col: "engine.UTCTime"},
	"resolved_key":       {bind: "string", col: "string"},
	"sequence_no":        {bind: "int64", col: "int64"},
	"since":              {col: "sql.NullTime"},
	"snapshot_version":   {bind: "int"},
	"source_name":        {bind: "string", col: "string"},
	"start":              {bind: "int64"},
	"started_at":         {col: "engine.UTCTime"},
	"state":              {bind: "*string", col: "sql.NullString"},
	"state_since":        {bind: "time.Time", col: "engine.UTCTime"},
	"status":             {bind: "string", col: "string"},
	"through":            {bind: "int64"},
	"topic":              {bind: "string"},
	"topic_start":        {col: "int64"},
	"unresolved":         {bind: "bool"},
	"upto":               {bind: "int64"},
	"val":                {col: "int64"},
	"xid":                {col: "int64"},

	// The stream-version binds: one aggregate id each.
	"id_a": {bind: "string"}, "id_b": {bind: "string"}, "id_c": {bind: "string"}, "id_d": {bind: "string"},
	"id_e": {bind: "string"}, "id_f": {bind: "string"}, "id_g": {bind: "string"}, "id_h": {bind: "string"},
	"id_i": {bind: "string"}, "id_j": {bind: "string"}, "id_k": {bind: "string"}, "id_l": {bind: "string"},
	"id_m": {bind: "string"}, "id_n": {bind: "string"}, "id_o": {bind: "string"}, "id_p": {bind: "string"},

	// Columns a statement returns in another form than the name's.
	"event.range id":                     {col: "engine.UUIDText"},
	"event.partition_range id":           {col: "engine.UUIDText"},
	"event.stream id":                    {col: "engine.UUIDText"},
	"topic.range id":                     {col: "engine.UUIDText"},
	"topic.partition_range id":           {col: "engine.UUIDText"},
	"topic.first_since global_position":  {col: "sql.NullInt64"},
	"lease.fence instance_id":            {col: "sql.NullString"},
	"lease.status_ownership instance_id": {col: "sql.NullString"},
	"lease.ownership instance_id":        {col: "sql.NullString"},
	"xid.end_horizon xid":                {col: "sql.NullInt64"},
	"snapshot.latest payload":            {col: "string"},
	"topic.checkpoints consumer_id":      {col: "engine.UUIDText"},
}

// perCallTables are the ${placeholders} a caller fills per call (one
// position object, event table or snapshot table of several); every other
// table is filled from the engine's shared names.
var perCallTables = map[string]bool{
	"position_table":            true,
	"event_store_table":         true,
	"aggregate_snapshots_table": true,
}
