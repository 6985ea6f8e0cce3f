package graphbench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs Neo4j Community embedded with APOC core, serving Bolt on a loopback port, for graph-bench.
 *
 * <p>Embedded rather than a server tarball because Maven Central is the only source the benchmark
 * machines can download from; the database engine, Cypher runtime and Bolt server are the same
 * code the packaged server runs. {@code scripts/peers start neo4j} starts it with the heap set by
 * {@code -Xmx}; SIGTERM shuts the database down cleanly through a shutdown hook.
 *
 * <p>Arguments: {@code --port P --dir HOME --pagecache SIZE --plugins DIR}. {@code HOME} holds
 * the store ({@code data/}) and Neo4j's own logs ({@code logs/debug.log}); {@code DIR} holds the
 * APOC core jar, loaded as a plugin exactly as the server loads {@code plugins/}.
 */
public final class Neo4jLauncher {
    private static final Duration START_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(1);

    private Neo4jLauncher() {}

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> opts = parseArgs(args);
        int port = Integer.parseInt(required(opts, "--port"));
        Path home = Path.of(required(opts, "--dir")).toAbsolutePath();
        long pagecache = ByteUnit.parse(required(opts, "--pagecache"));
        Path plugins = Path.of(required(opts, "--plugins")).toAbsolutePath();

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                // Neo4j's user log (start-up, errors) goes to stdout, which the script keeps.
                .setUserLogProvider(new Log4jLogProvider(System.out))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                // When Bolt stops it waits 5 s for idle connections, then 5 s for its threads;
                // the databases are already checkpointed and closed by then, so 1 s each will do.
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, SHUTDOWN_WAIT)
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, SHUTDOWN_WAIT)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // The machine has no route to Neo4j's usage-report endpoint.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pagecache)
                .setConfig(GraphDatabaseSettings.plugin_dir, plugins)
                // Keep only the transaction logs recovery needs (default: two days' worth), so
                // that repeated loads of large graphs do not fill the disk.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
                // APOC's documented set-up: some of its procedures use internal APIs, which Neo4j
                // only grants to procedures named here.
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(START_TIMEOUT.toMillis())) {
            fail("the database did not become available within " + START_TIMEOUT);
        }
        // A missing APOC would only show when the first tuned query runs; fail at start instead.
        boolean apoc = db.executeTransactionally(
                "SHOW PROCEDURES YIELD name WHERE name = 'apoc.path.subgraphNodes' RETURN count(*) AS n",
                Map.of(),
                result -> ((Number) result.next().get("n")).longValue() == 1);
        if (!apoc) {
            fail("APOC core is not loaded from " + plugins + ": run `scripts/peers install neo4j`");
        }

        // scripts/peers waits for this exact line.
        System.out.println("neo4j ready bolt://127.0.0.1:" + port);
        System.out.flush();
        // Serve until SIGTERM: the shutdown hook stops the database, then the JVM exits.
        stopped.await();
    }

    private static Map<String, String> parseArgs(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i];
            boolean known = List.of("--port", "--dir", "--pagecache", "--plugins").contains(name);
            if (!known || i + 1 == args.length) {
                usage("unexpected argument: " + name);
            }
            opts.put(name, args[i + 1]);
        }
        return opts;
    }

    private static String required(Map<String, String> opts, String name) {
        String value = opts.get(name);
        if (value == null) {
            usage("missing " + name);
        }
        return value;
    }

    private static void usage(String problem) {
        fail(problem + "\nusage: Neo4jLauncher --port P --dir HOME --pagecache SIZE --plugins DIR");
    }

    private static void fail(String message) {
        System.err.println("neo4j-launcher: " + message);
        System.exit(1);
    }
}
