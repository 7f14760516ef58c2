import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;

/**
 * Runs DynamoDB Local bound to 127.0.0.1 only. DynamoDB Local's own `ServerRunner` builds a Jetty
 * `Server(port)`, whose connector listens on every interface and which offers no host option, so
 * this launcher builds the server exactly as `ServerRunner` does, then sets the host on the Jetty
 * connectors before starting it.
 *
 * <p>Arguments are DynamoDB Local's (`-inMemory`, `-dbPath <dir>`, `-sharedDb`, ...) plus:
 *
 * <ul>
 *   <li>`-port <n>`: as DynamoDB Local's, but 0 is allowed and means "any free port".
 *   <li>`--exit-on-stdin-eof`: exit when standard input closes, so that the JVM dies with the
 *       process that spawned it even when that process is killed without a chance to clean up.
 * </ul>
 *
 * <p>Contract with the caller: once the server accepts connections, one line `LISTENING
 * 127.0.0.1:<port>` (the actual port) is printed on standard output. On any start-up failure the
 * launcher prints the reason on standard error and exits with status 1.
 */
public final class LoopbackDynamoDbLocal {
  private static final String HOST = "127.0.0.1";

  private LoopbackDynamoDbLocal() {}

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable error) {
      System.err.println("LoopbackDynamoDbLocal: could not start DynamoDB Local: " + error);
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    int port = ServerRunner.DEFAULT_PORT;
    boolean exitOnStdinEof = false;
    List<String> dynamoDbArgs = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("-port")) {
        if (i + 1 >= args.length) throw new IllegalArgumentException("-port needs a value");
        port = Integer.parseInt(args[++i]);
        if (port < 0 || port > 65535) throw new IllegalArgumentException("invalid port " + port);
      } else if (arg.equals("--exit-on-stdin-eof")) {
        exitOnStdinEof = true;
      } else {
        dynamoDbArgs.add(arg);
      }
    }
    // DynamoDB Local's parser rejects port 0, so it is given no port (its banner then shows the
    // default) and the connectors get the real one below.
    if (port != 0) {
      dynamoDbArgs.add("-port");
      dynamoDbArgs.add(Integer.toString(port));
    }

    DynamoDBProxyServer proxy =
        ServerRunner.createServerFromCommandLineArgs(dynamoDbArgs.toArray(new String[0]));
    Connector[] connectors = jettyServerOf(proxy).getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("the Jetty server has no connector");
    for (Connector connector : connectors) {
      if (!(connector instanceof AbstractNetworkConnector network)) {
        throw new IllegalStateException("unexpected Jetty connector " + connector.getClass());
      }
      network.setHost(HOST);
      network.setPort(port);
    }

    // `safeStart` is `start` without the telemetry call and without swallowing a bind failure.
    proxy.safeStart();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> stopQuietly(proxy), "ddb-local-shutdown"));

    int actualPort = ((AbstractNetworkConnector) connectors[0]).getLocalPort();
    System.out.println("LISTENING " + HOST + ":" + actualPort);
    System.out.flush();

    if (exitOnStdinEof) watchStdin();
    proxy.join();
  }

  /**
   * The Jetty server is a private field of `DynamoDBProxyServer`; it is found by type rather than
   * by name so that a renamed field in a later DynamoDB Local still works.
   */
  private static Server jettyServerOf(DynamoDBProxyServer proxy) throws IllegalAccessException {
    for (Field field : DynamoDBProxyServer.class.getDeclaredFields()) {
      if (Server.class.isAssignableFrom(field.getType())) {
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        if (server != null) return server;
      }
    }
    throw new IllegalStateException("no Jetty Server field in DynamoDBProxyServer");
  }

  private static void watchStdin() {
    Thread watcher =
        new Thread(
            () -> {
              InputStream in = System.in;
              byte[] buffer = new byte[256];
              try {
                while (in.read(buffer) >= 0) {
                  // Input is ignored; only its end matters.
                }
              } catch (IOException ignored) {
                // A broken pipe means the parent is gone too.
              }
              System.exit(0);
            },
            "ddb-local-stdin-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  private static void stopQuietly(DynamoDBProxyServer proxy) {
    try {
      proxy.stop();
    } catch (Exception ignored) {
      // The JVM is exiting anyway.
    }
  }
}
