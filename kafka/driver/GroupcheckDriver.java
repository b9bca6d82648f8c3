/*
 * groupcheck's Java client driver: one KafkaConsumer, driven by JSON-line commands on stdin,
 * reporting JSON-line events on stdout (one object a line, flushed per line; nothing else goes
 * to stdout: System.out is pointed at stderr, and the client's logs go to stderr).
 *
 * Compile: javac -d DIR -cp 'KAFKA/libs/*' kafka/driver/GroupcheckDriver.java
 * Run:     java -cp 'KAFKA/libs/*:DIR' GroupcheckDriver
 *
 * The consumer is used from the main thread only (KafkaConsumer is not thread-safe): a daemon
 * thread reads stdin into a queue, the main thread takes commands from it between polls. EOF on
 * stdin closes the consumer (default close) and exits 0, so the driver never outlives its parent.
 * The wire (commands and events) is documented in groupcheck/kafka/clients.py.
 *
 * Logging: unless -Dlog4j2.configurationFile is given, log4j2 is configured here: console on
 * stderr, root level from -Dgroupcheck.log.level (default INFO).
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.AppenderComponentBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;

public final class GroupcheckDriver {
    private static final long POLL_MS = 50;
    private static final String EOF = "\u0000EOF";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> CLASSIC_ASSIGNORS = Map.of(
            "range", "org.apache.kafka.clients.consumer.RangeAssignor",
            "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
            "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    private final PrintStream events;
    private final LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();

    private KafkaConsumer<byte[], byte[]> consumer;
    private String client;
    private String commandClient; // the "client" of the command being run, for its errors
    private String protocol;
    private boolean subscribed;
    private long stalledUntil = -1; // wall-clock ms; -1: not stalled
    private final Map<String, Long> slowCallbacks = new HashMap<>();
    private String lastMemberId;
    private Integer lastEpoch;
    private Set<String> lastAssignment;
    private String lastPollError;
    private long lastPollErrorAt;

    private GroupcheckDriver(PrintStream events) {
        this.events = events;
    }

    public static void main(String[] args) {
        // stdout is the event channel: keep a private handle on it, and send everything else
        // that would write to System.out (a library, a stray print) to stderr.
        PrintStream out = new PrintStream(
                new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        configureLogging();
        GroupcheckDriver driver = new GroupcheckDriver(out);
        driver.startReader();
        int code = driver.run();
        out.flush();
        System.exit(code);
    }

    private static void configureLogging() {
        if (System.getProperty("log4j2.configurationFile") != null) {
            return;
        }
        Level level = Level.toLevel(System.getProperty("groupcheck.log.level", "INFO"), Level.INFO);
        ConfigurationBuilder<BuiltConfiguration> builder =
                ConfigurationBuilderFactory.newConfigurationBuilder();
        AppenderComponentBuilder console = builder.newAppender("stderr", "Console")
                .addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR);
        console.add(builder.newLayout("PatternLayout")
                .addAttribute("pattern", "%d{HH:mm:ss.SSS} %-5level [%t] %c{1}: %msg%n"));
        builder.add(console);
        builder.add(builder.newRootLogger(level).add(builder.newAppenderRef("stderr")));
        Configurator.reconfigure(builder.build());
    }

    private void startReader() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.isBlank()) {
                        commands.add(line);
                    }
                }
            } catch (Exception e) {
                System.err.println("groupcheck driver: stdin: " + e);
            }
            commands.add(EOF);
        }, "stdin-reader");
        reader.setDaemon(true);
        reader.start();
    }

    // ---- events --------------------------------------------------------------------------

    private ObjectNode event(String name, boolean withClient) {
        ObjectNode e = JSON.createObjectNode();
        e.put("ts", System.currentTimeMillis());
        if (withClient) {
            e.put("client", client);
        }
        e.put("event", name);
        return e;
    }

    private ObjectNode event(String name) {
        return event(name, client != null);
    }

    /** An error event, naming the client of the command being run when there is one. */
    private ObjectNode errorEvent() {
        String who = commandClient != null ? commandClient : client;
        ObjectNode e = JSON.createObjectNode();
        e.put("ts", System.currentTimeMillis());
        if (who != null) {
            e.put("client", who);
        }
        e.put("event", "error");
        return e;
    }

    private synchronized void emit(ObjectNode e) {
        try {
            events.print(JSON.writeValueAsString(e));
            events.print('\n');
            events.flush();
        } catch (Exception ex) {
            System.err.println("groupcheck driver: cannot write event: " + ex);
        }
    }

    private void error(String message) {
        ObjectNode e = errorEvent();
        e.put("message", message);
        emit(e);
    }

    private void error(String context, Throwable t) {
        ObjectNode e = errorEvent();
        e.put("message", context + ": " + t.getClass().getName() + ": " + t.getMessage());
        e.put("exception", t.getClass().getName());
        emit(e);
    }

    private static ArrayNode partitions(Collection<TopicPartition> tps) {
        ArrayNode a = JSON.createArrayNode();
        for (String s : names(tps)) {
            a.add(s);
        }
        return a;
    }

    private static TreeSet<String> names(Collection<TopicPartition> tps) {
        TreeSet<String> s = new TreeSet<>();
        for (TopicPartition tp : tps) {
            s.add(tp.topic() + "-" + tp.partition());
        }
        return s;
    }

    // ---- main loop -----------------------------------------------------------------------

    private int run() {
        ObjectNode ready = event("ready", false);
        ready.put("library", "kafka-clients " + clientsVersion());
        ready.put("pid", ProcessHandle.current().pid());
        emit(ready);
        while (true) {
            String line;
            try {
                if (consumer != null && subscribed && stalledUntil < 0) {
                    line = commands.poll();
                } else {
                    line = commands.poll(POLL_MS, TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                line = EOF;
            }
            if (line != null) {
                if (line.equals(EOF)) {
                    closeQuietly("default");
                    return 0;
                }
                Integer exit;
                try {
                    exit = execute(line);
                } finally {
                    commandClient = null;
                }
                if (exit != null) {
                    return exit;
                }
                continue; // take every queued command before the next poll
            }
            if (stalledUntil >= 0 && System.currentTimeMillis() >= stalledUntil) {
                stalledUntil = -1;
                emit(event("resumed"));
            }
            if (consumer != null && subscribed && stalledUntil < 0) {
                pollOnce();
            }
        }
    }

    private void pollOnce() {
        try {
            consumer.poll(Duration.ofMillis(POLL_MS));
            lastPollError = null;
        } catch (Exception e) {
            String key = e.getClass().getName() + ": " + e.getMessage();
            long now = System.currentTimeMillis();
            // A persistent failure would repeat every poll: the same error at most every 5 s.
            if (!key.equals(lastPollError) || now - lastPollErrorAt >= 5000) {
                lastPollError = key;
                lastPollErrorAt = now;
                error("poll", e);
            }
        }
        observe();
    }

    /** The member and assignment events, when either changed since the last look. */
    private void observe() {
        checkMember();
        if (consumer == null) {
            return;
        }
        try {
            TreeSet<String> now = names(consumer.assignment());
            if (!now.equals(lastAssignment)) {
                lastAssignment = now;
                ObjectNode e = event("assignment");
                ArrayNode a = e.putArray("partitions");
                now.forEach(a::add);
                emit(e);
            }
        } catch (Exception e) {
            error("assignment", e);
        }
    }

    private void checkMember() {
        if (consumer == null) {
            return;
        }
        ConsumerGroupMetadata meta;
        try {
            meta = consumer.groupMetadata();
        } catch (Exception e) {
            return; // closed, or no group: nothing to report
        }
        String memberId = meta.memberId();
        int epoch = meta.generationId();
        if (!memberId.equals(lastMemberId) || lastEpoch == null || epoch != lastEpoch) {
            lastMemberId = memberId;
            lastEpoch = epoch;
            ObjectNode e = event("member");
            e.put("member_id", memberId);
            e.put("epoch", epoch);
            emit(e);
        }
    }

    // ---- commands ------------------------------------------------------------------------

    /** Runs one command line; a non-null result is the exit code the driver exits with. */
    private Integer execute(String line) {
        JsonNode cmd;
        try {
            cmd = JSON.readTree(line);
        } catch (Exception e) {
            error("bad command (not JSON): " + line);
            return null;
        }
        if (cmd == null || !cmd.isObject() || !cmd.path("cmd").isTextual()) {
            error("bad command (no \"cmd\"): " + line);
            return null;
        }
        String name = cmd.get("cmd").asText();
        if (name.equals("exit")) {
            closeQuietly("default");
            return 0;
        }
        String target = cmd.path("client").isTextual() ? cmd.get("client").asText() : null;
        commandClient = target;
        if (target == null) {
            error("bad command " + name + ": no \"client\"");
            return null;
        }
        if (name.equals("create")) {
            create(target, cmd);
            return null;
        }
        if (consumer == null || !target.equals(client)) {
            error("bad command " + name + ": no consumer " + target
                    + (client == null ? " (none created)" : " (this driver holds " + client + ")"));
            return null;
        }
        try {
            switch (name) {
                case "subscribe" -> subscribe(cmd);
                case "subscribe_pattern" -> subscribePattern(cmd);
                case "unsubscribe" -> {
                    ObjectNode e = event("unsubscribed"); // stamped before the call
                    consumer.unsubscribe();
                    subscribed = false;
                    emit(e);
                }
                case "commit" -> commit();
                case "stall" -> {
                    long ms = cmd.path("ms").asLong(-1);
                    if (ms < 0) {
                        error("bad command stall: \"ms\" must be a non-negative integer");
                        return null;
                    }
                    stalledUntil = System.currentTimeMillis() + ms;
                    ObjectNode e = event("stalled");
                    e.put("ms", ms);
                    emit(e);
                }
                case "slow_callback" -> {
                    String cb = cmd.path("callback").asText("");
                    long ms = cmd.path("ms").asLong(-1);
                    if (!(cb.equals("assigned") || cb.equals("revoked") || cb.equals("lost"))
                            || ms < 0) {
                        error("bad command slow_callback: needs \"callback\" assigned|revoked|lost"
                                + " and \"ms\" >= 0");
                        return null;
                    }
                    slowCallbacks.put(cb, ms);
                }
                case "close" -> {
                    String leave = cmd.path("leave").asText("default");
                    if (!(leave.equals("default") || leave.equals("leave")
                            || leave.equals("remain"))) {
                        error("bad command close: \"leave\" must be default, leave or remain");
                        return null;
                    }
                    closeQuietly(leave);
                    return 0;
                }
                case "crash" -> {
                    emit(event("crash"));
                    events.flush();
                    Runtime.getRuntime().halt(137);
                }
                default -> error("bad command " + name + ": unknown");
            }
        } catch (Exception e) {
            error(name, e);
        }
        observe();
        return null;
    }

    private void create(String name, JsonNode cmd) {
        if (consumer != null) {
            error("bad command create: this driver already holds consumer " + client);
            return;
        }
        String proto = cmd.path("protocol").asText("consumer");
        if (!(proto.equals("consumer") || proto.equals("classic"))) {
            error("bad command create: protocol must be consumer or classic");
            return;
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", cmd.path("bootstrap").asText(""));
        p.put("group.id", cmd.path("group").asText(""));
        p.put("client.id", name);
        p.put("group.protocol", proto);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        String assignor = text(cmd, "assignor");
        if (assignor != null) {
            if (proto.equals("consumer")) {
                p.put("group.remote.assignor", assignor);
            } else {
                p.put("partition.assignment.strategy",
                        CLASSIC_ASSIGNORS.getOrDefault(assignor, assignor));
            }
        }
        String instance = text(cmd, "instance_id");
        if (instance != null) {
            p.put("group.instance.id", instance);
        }
        Long maxPoll = number(cmd, "max_poll_interval_ms");
        if (maxPoll != null) {
            p.put("max.poll.interval.ms", maxPoll.toString());
        }
        Long session = number(cmd, "session_timeout_ms");
        Long heartbeat = number(cmd, "heartbeat_interval_ms");
        if (proto.equals("consumer") && (session != null || heartbeat != null)) {
            error("bad command create: session_timeout_ms and heartbeat_interval_ms apply to the"
                    + " classic protocol only (group.protocol=consumer takes them from the broker)");
            return;
        }
        if (session != null) {
            p.put("session.timeout.ms", session.toString());
        }
        if (heartbeat != null) {
            p.put("heartbeat.interval.ms", heartbeat.toString());
        }
        JsonNode props = cmd.path("props");
        if (props.isObject()) {
            for (Map.Entry<String, JsonNode> f : props.properties()) {
                p.put(f.getKey(), f.getValue().asText());
            }
        }
        String previous = client;
        client = name;
        try {
            consumer = new KafkaConsumer<>(p);
        } catch (Exception e) {
            error("create", e);
            client = previous;
            return;
        }
        protocol = proto;
        ObjectNode e = event("created");
        e.put("protocol", proto);
        emit(e);
        observe();
    }

    private static String text(JsonNode cmd, String field) {
        JsonNode n = cmd.get(field);
        return n == null || n.isNull() ? null : n.asText();
    }

    private static Long number(JsonNode cmd, String field) {
        JsonNode n = cmd.get(field);
        return n == null || n.isNull() ? null : n.asLong();
    }

    private void subscribe(JsonNode cmd) {
        JsonNode topics = cmd.path("topics");
        if (!topics.isArray()) {
            error("bad command subscribe: \"topics\" must be a list");
            return;
        }
        List<String> list = new ArrayList<>();
        topics.forEach(t -> list.add(t.asText()));
        // Stamped before the call: the background thread may send the join at once.
        ObjectNode e = event("subscribed");
        consumer.subscribe(list, listener);
        subscribed = true;
        ArrayNode a = e.putArray("topics");
        list.forEach(a::add);
        emit(e);
    }

    private void subscribePattern(JsonNode cmd) {
        String pattern = text(cmd, "pattern");
        if (pattern == null) {
            error("bad command subscribe_pattern: no \"pattern\"");
            return;
        }
        ObjectNode e = event("subscribed"); // stamped before the call
        if (protocol.equals("consumer")) {
            consumer.subscribe(new SubscriptionPattern(pattern), listener); // broker-side RE2J
        } else {
            consumer.subscribe(Pattern.compile(pattern), listener);
        }
        subscribed = true;
        e.put("pattern", pattern);
        emit(e);
    }

    private void commit() {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            long position = 0;
            try {
                position = consumer.position(tp, Duration.ofSeconds(2));
            } catch (Exception e) {
                position = 0; // unknown
            }
            offsets.put(tp, new OffsetAndMetadata(position));
        }
        ObjectNode e;
        try {
            if (!offsets.isEmpty()) {
                consumer.commitSync(offsets);
            }
            e = event("committed");
        } catch (Exception ex) {
            e = event("commit_failed");
            e.put("error", ex.getClass().getName());
            e.put("message", String.valueOf(ex.getMessage()));
        }
        ObjectNode o = e.putObject("offsets");
        Map<String, Long> sorted = new TreeMap<>();
        offsets.forEach((tp, om) -> sorted.put(tp.topic() + "-" + tp.partition(), om.offset()));
        sorted.forEach(o::put);
        emit(e);
    }

    /**
     * Closes the consumer (if any): writes {@code closing} as {@code close} is called and
     * {@code closed} when it returned; errors become {@code error}.
     */
    private void closeQuietly(String leave) {
        if (consumer == null) {
            return;
        }
        CloseOptions.GroupMembershipOperation op = switch (leave) {
            case "leave" -> CloseOptions.GroupMembershipOperation.LEAVE_GROUP;
            case "remain" -> CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP;
            default -> CloseOptions.GroupMembershipOperation.DEFAULT;
        };
        ObjectNode closing = event("closing");
        closing.put("leave", leave);
        emit(closing);
        try {
            consumer.close(CloseOptions.groupMembershipOperation(op));
        } catch (Exception e) {
            error("close", e);
        }
        consumer = null;
        subscribed = false;
        ObjectNode e = event("closed");
        e.put("leave", leave);
        emit(e);
    }

    // ---- rebalance callbacks -------------------------------------------------------------

    private final ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            callback("revoked", partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            callback("assigned", partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            callback("lost", partitions);
        }
    };

    private void callback(String name, Collection<TopicPartition> partitions) {
        ObjectNode e = event(name);
        e.set("partitions", partitions(partitions));
        emit(e);
        Long ms = partitions.isEmpty() ? null : slowCallbacks.remove(name);
        if (ms != null) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            ObjectNode end = event("callback_end");
            end.put("callback", name);
            end.set("partitions", partitions(partitions));
            emit(end);
        }
        checkMember();
    }

    /**
     * The kafka-clients version, from the {@code kafka/kafka-version.properties} resource the
     * jar carries (its reader class moved between releases, the resource did not).
     */
    private static String clientsVersion() {
        java.util.Properties props = new java.util.Properties();
        try (java.io.InputStream in = GroupcheckDriver.class.getClassLoader()
                .getResourceAsStream("kafka/kafka-version.properties")) {
            if (in != null) {
                props.load(in);
            }
        } catch (java.io.IOException e) {
            return "unknown";
        }
        return props.getProperty("version", "unknown");
    }
}
