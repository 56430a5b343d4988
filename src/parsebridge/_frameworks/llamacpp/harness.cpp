// parsebridge's llama.cpp parse harness: llama.cpp's own chat code (common/chat.h) behind JSON lines.
//
// Written only against chat.h: common_chat_templates_init, common_chat_templates_apply,
// common_chat_parse and common_chat_msg_diff::compute_diffs, called the way llama-server calls
// them (server-common.cpp renders the request, server-task.cpp parses each step with is_partial
// and diffs the successive messages). No model, no vocabulary, no GPU: a template is given as
// text, and bos/eos as strings.
//
//   pb-llamacpp-harness                # one session on stdin/stdout
//   pb-llamacpp-harness --port N       # listen on 127.0.0.1:N, one connection at a time
//
// One JSON object per line each way. Requests ("op"):
//   {"op":"ping"}
//   {"op":"apply","template":SRC,"bos":"","eos":"","messages":[...],"tools":[...],
//    "tool_choice":"auto","enable_thinking":null,"reasoning_format":"auto",
//    "parallel_tool_calls":null,"kwargs":{"name":"<json text>"}}
//        -> {"ok":true,"session":N,"format":..,"prompt":..,"generation_prompt":..,...}
//   {"op":"parse","session":N,"text":..,"partial":false}  -> {"ok":true,"message":{...}}
//   {"op":"open_stream","session":N}                      -> {"ok":true,"stream":M}
//   {"op":"step","stream":M,"text":"tok","final":false}   -> {"ok":true,"diffs":[...]}
//        (the final step, "final":true with no text, also gives "message" and ends the stream;
//         a step that throws ends it too, as the server's stream ends at an error)
//   {"op":"close","session":N}
// Every answer has "ok"; a C++ exception becomes {"ok":false,"error":"..."}.

#include "chat.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#    include <sys/prctl.h>
#endif

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using json = nlohmann::ordered_json;

namespace {

struct session {
    common_chat_parser_params params;
};

// Templates are parsed once per (source, bos, eos); sessions hold a request's parser.
std::map<std::string, common_chat_templates_ptr> g_templates;
std::map<long, session>                          g_sessions;
long                                             g_next_session = 1;

std::string text_of(const json & v) {
    if (v.is_null()) {
        return "";
    }
    if (v.is_string()) {
        return v.get<std::string>();
    }
    return v.dump();
}

common_chat_msg read_message(const json & m) {
    common_chat_msg msg;
    msg.role = m.value("role", "user");
    if (m.contains("content") && m["content"].is_array()) {
        for (const auto & part : m["content"]) {
            msg.content_parts.push_back({ part.value("type", "text"), part.value("text", "") });
        }
    } else if (m.contains("content")) {
        msg.content = text_of(m["content"]);
    }
    if (m.contains("reasoning_content")) {
        msg.reasoning_content = text_of(m["reasoning_content"]);
    }
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
        for (const auto & call : m["tool_calls"]) {
            const json & fn = call.contains("function") ? call["function"] : call;
            msg.tool_calls.push_back({ fn.value("name", ""), text_of(fn.value("arguments", json::object())),
                                       call.value("id", "") });
        }
    }
    if (m.contains("tool_call_id")) {
        msg.tool_call_id = text_of(m["tool_call_id"]);
    }
    if (m.contains("name")) {
        msg.tool_name = text_of(m["name"]);
    }
    return msg;
}

common_chat_tool read_tool(const json & t) {
    const json & fn = t.contains("function") ? t["function"] : t;
    return { fn.value("name", ""), fn.value("description", ""),
             fn.value("parameters", json::object()).dump() };
}

json message_json(const common_chat_msg & msg) {
    json calls = json::array();
    for (const auto & c : msg.tool_calls) {
        calls.push_back({ { "name", c.name }, { "arguments", c.arguments }, { "id", c.id } });
    }
    return { { "role", msg.role },
             { "content", msg.content },
             { "reasoning_content", msg.reasoning_content },
             { "tool_calls", calls } };
}

json diff_json(const common_chat_msg_diff & d) {
    json out = { { "reasoning_content_delta", d.reasoning_content_delta }, { "content_delta", d.content_delta } };
    if (d.tool_call_index != std::string::npos) {
        out["tool_call_index"] = d.tool_call_index;
        out["tool_call_delta"] = { { "name", d.tool_call_delta.name },
                                   { "arguments", d.tool_call_delta.arguments },
                                   { "id", d.tool_call_delta.id } };
    }
    return out;
}

// The reasoning end markers: a list in newer snapshots (thinking_end_tags), one string before.
template <typename P> auto end_tags(const P & p, int) -> decltype(p.thinking_end_tags, json()) {
    json out = json::array();
    for (const auto & tag : p.thinking_end_tags) {
        out.push_back(tag);
    }
    return out;
}

template <typename P> json end_tags(const P & p, long) {
    return p.thinking_end_tag.empty() ? json::array() : json::array({ p.thinking_end_tag });
}

common_chat_templates * templates_for(const json & req) {
    const std::string src = req.at("template").get<std::string>();
    const std::string bos = req.value("bos", "");
    const std::string eos = req.value("eos", "");
    const std::string key = bos + '\x01' + eos + '\x01' + src;
    auto              it  = g_templates.find(key);
    if (it == g_templates.end()) {
        it = g_templates.emplace(key, common_chat_templates_init(nullptr, src, bos, eos)).first;
    }
    return it->second.get();
}

// The request as llama-server builds it from an OpenAI chat request (server-common.cpp).
common_chat_templates_inputs inputs_for(const json & req, const common_chat_templates * tmpls) {
    common_chat_templates_inputs inputs;
    const json messages = req.value("messages", json::array());
    const json tools    = req.value("tools", json::array());
    for (const auto & m : messages) {
        inputs.messages.push_back(read_message(m));
    }
    for (const auto & t : tools) {
        inputs.tools.push_back(read_tool(t));
    }
    inputs.tool_choice = common_chat_tool_choice_parse_oaicompat(req.value("tool_choice", "auto"));
    auto caps          = common_chat_templates_get_caps(tmpls);
    const json & par   = req.contains("parallel_tool_calls") ? req["parallel_tool_calls"] : json();
    inputs.parallel_tool_calls = par.is_boolean() ? par.get<bool>() : caps["supports_parallel_tool_calls"];
    inputs.reasoning_format    = common_reasoning_format_from_name(req.value("reasoning_format", "auto"));
    // The server's default: thinking on when the template supports it (`--reasoning auto`).
    const json & think     = req.contains("enable_thinking") ? req["enable_thinking"] : json();
    inputs.enable_thinking = think.is_boolean() ? think.get<bool>()
                                                : common_chat_templates_support_enable_thinking(tmpls);
    const json kwargs = req.value("kwargs", json::object());
    for (const auto & item : kwargs.items()) {
        inputs.chat_template_kwargs[item.key()] = text_of(item.value());
    }
    return inputs;
}

json op_apply(const json & req) {
    common_chat_templates * tmpls  = templates_for(req);
    auto                    inputs = inputs_for(req, tmpls);
    common_chat_params      params = common_chat_templates_apply(tmpls, inputs);

    // What llama-server hands its task for parsing (server-schema.cpp).
    common_chat_parser_params pp(params);
    pp.reasoning_format     = inputs.reasoning_format;
    pp.reasoning_in_content = false;
    pp.parse_tool_calls     = true;
    if (!params.parser.empty()) {
        pp.parser.load(params.parser);
    }
    long id = g_next_session++;
    g_sessions[id] = { pp };

    return { { "ok", true },
             { "session", id },
             { "format", common_chat_format_name(params.format) },
             { "prompt", params.prompt },
             { "generation_prompt", params.generation_prompt },
             { "supports_thinking", params.supports_thinking },
             { "enable_thinking", inputs.enable_thinking },
             { "thinking_start_tag", params.thinking_start_tag },
             { "thinking_end_tags", end_tags(params, 0) },
             { "preserved_tokens", params.preserved_tokens },
             { "additional_stops", params.additional_stops } };
}

session & session_for(const json & req) {
    auto it = g_sessions.find(req.at("session").get<long>());
    if (it == g_sessions.end()) {
        throw std::invalid_argument("unknown session");
    }
    return it->second;
}

json op_parse(const json & req) {
    const session & s   = session_for(req);
    common_chat_msg msg = common_chat_parse(req.at("text").get<std::string>(), req.value("partial", false), s.params);
    return { { "ok", true }, { "message", message_json(msg) } };
}

// A stream as llama-server runs one (server-task.cpp, task_result_state::update_chat_msg): each
// step appends its text, parses everything so far (partial until the final step, which adds
// nothing and is not partial), keeps the message when it is not empty, and sends the
// difference from the previous one (common_chat_msg_diff::compute_diffs).
struct stream_state {
    long                     session;
    std::string              text;
    common_chat_msg          prev;
    std::vector<std::string> ids;
};

std::map<long, stream_state> g_streams;

json op_open_stream(const json & req) {
    long sid = req.at("session").get<long>();
    session_for(req);
    long id       = g_next_session++;
    g_streams[id] = { sid, "", {}, {} };
    return { { "ok", true }, { "stream", id } };
}

json op_step(const json & req) {
    auto it = g_streams.find(req.at("stream").get<long>());
    if (it == g_streams.end()) {
        throw std::invalid_argument("unknown stream");
    }
    stream_state &  st    = it->second;
    const bool      final = req.value("final", false);
    const session & s     = g_sessions.at(st.session);
    st.text += req.value("text", "");
    json diffs = json::array();
    try {
        common_chat_msg msg = common_chat_parse(st.text, !final, s.params);
        if (!msg.empty()) {
            // The server names ids itself (random strings); ours are numbered.
            msg.set_tool_call_ids(st.ids, [&]() { return "call_" + std::to_string(st.ids.size()); });
            for (const auto & d : common_chat_msg_diff::compute_diffs(st.prev, msg)) {
                diffs.push_back(diff_json(d));
            }
            st.prev = msg;
        }
    } catch (...) {
        g_streams.erase(it);  // the server's stream ends at an error
        throw;
    }
    json out = { { "ok", true }, { "diffs", diffs } };
    if (final) {
        out["message"] = message_json(st.prev);
        g_streams.erase(it);
    }
    return out;
}

json handle(const std::string & line) {
    try {
        json        req = json::parse(line);
        std::string op  = req.value("op", "");
        if (op == "ping") {
            return { { "ok", true } };
        }
        if (op == "apply") {
            return op_apply(req);
        }
        if (op == "parse") {
            return op_parse(req);
        }
        if (op == "open_stream") {
            return op_open_stream(req);
        }
        if (op == "step") {
            return op_step(req);
        }
        if (op == "close") {
            g_sessions.erase(req.value("session", 0L));
            g_streams.erase(req.value("stream", 0L));
            return { { "ok", true } };
        }
        return { { "ok", false }, { "error", "unknown op: " + op } };
    } catch (const std::exception & e) {
        return { { "ok", false }, { "error", e.what() } };
    }
}

std::string answer(const std::string & line) {
    // Invalid UTF-8 in a parsed text would make dump() throw: replace it rather than fail.
    return handle(line).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

void serve_stdio() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::cout << answer(line) << std::flush;
    }
}

bool send_all(int fd, const std::string & data) {
    size_t sent = 0;
    while (sent < data.size()) {
        ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            return false;
        }
        sent += (size_t) n;
    }
    return true;
}

void serve_connection(int fd) {
    std::string buf;
    char        chunk[65536];
    for (;;) {
        ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) {
            return;
        }
        buf.append(chunk, (size_t) n);
        size_t nl;
        while ((nl = buf.find('\n')) != std::string::npos) {
            std::string line = buf.substr(0, nl);
            buf.erase(0, nl + 1);
            if (!send_all(fd, answer(line))) {
                return;
            }
        }
    }
}

int serve_port(int port) {
    int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family      = AF_INET;
    addr.sin_port        = htons((uint16_t) port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(srv, (sockaddr *) &addr, sizeof(addr)) != 0 || ::listen(srv, 4) != 0) {
        std::perror("pb-llamacpp-harness: bind/listen");
        return 1;
    }
    std::fprintf(stderr, "pb-llamacpp-harness listening on 127.0.0.1:%d\n", port);
    for (;;) {
        int fd = ::accept(srv, nullptr, nullptr);
        if (fd < 0) {
            continue;
        }
        // Answers go out as they are made: with Nagle's algorithm on, a window of pipelined answers
        // waited on the client's delayed ACKs (about 40 ms a window; conformance spent half its time so).
        int nodelay = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
        serve_connection(fd);
        ::close(fd);
    }
}

}  // namespace

int main(int argc, char ** argv) {
#ifdef __linux__
    // End with the process that started this one (parsebridge's watcher), however it ends.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) {
        return 1;
    }
#endif
    for (int i = 1; i + 1 < argc; i++) {
        if (std::strcmp(argv[i], "--port") == 0) {
            return serve_port(std::atoi(argv[i + 1]));
        }
    }
    serve_stdio();
    return 0;
}
