package dialect

// Seeds and checks of the partitioning area, run at every start whatever
// the schema switch.
const (
	// PartitionSeed inserts (id 1, #{partitions}) into
	// ${partition_metadata_table} unless a row exists; never overwrites.
	PartitionSeed StatementID = "partition.seed"
	// PartitionRead returns the single column partitions of row id 1.
	PartitionRead StatementID = "partition.read"
)

var schemaStatements = []StatementSpec{
	{ID: PartitionSeed, Binds: []string{"partitions"}, Tables: []string{"partition_metadata_table"}},
	{ID: PartitionRead, Tables: []string{"partition_metadata_table"}, Returns: []string{"partitions"}},
}

// templateSpecs are the specs of the catalogue's templates that are not in
// Statements (introspection, the schema lock, the query-table index guard),
// keyed by the name (*Catalogue).Validate reports them under.
var templateSpecs = map[string]StatementSpec{
	"introspection.table_exists":    {Binds: []string{"table"}},
	"introspection.sequence_exists": {Binds: []string{"sequence"}},
	"introspection.columns":         {Binds: []string{"table"}},
	"introspection.indexes":         {Binds: []string{"table"}},
	"schema_lock.acquire":           {Binds: []string{"name"}},
	"schema_lock.release":           {Binds: []string{"name"}},
	"query_columns.index_exists":    {Binds: []string{"table", "index"}},
}
