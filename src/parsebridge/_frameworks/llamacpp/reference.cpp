// A reference reader with no parsebridge code in the loop: common_chat_parse on each case, called
// the way llama.cpp's own tests call it (tests/test-chat.cpp: the template read from a file, the
// request's inputs set directly, the message parsed whole and at every prefix with is_partial).
//
//   pb-llamacpp-reference < cases.jsonl > readings.jsonl
//
// A case: {"template_path":P,"tools":[{"name","description","parameters"(JSON text)}],
//          "messages":[{"role","content"}],"reasoning_format":"none"|"auto","enable_thinking":B|null,
//          "parallel_tool_calls":B|null,"tool_choice":"auto","kwargs":{NAME:"<json text>"},"input":TEXT}
// A reading: {"oneshot":MSG,"stream":[[CODEPOINTS,MSG],...]}: the whole parse, and the message a
// streaming client has built after each engine step of "step" code points (default 1), the last
// entry after the final step; or {"error":E} when the request does not render.
// MSG: {"content","reasoning_content","tool_calls":[{"name","arguments"}]}.

#include "chat.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using json = nlohmann::ordered_json;

static json msg_json(const common_chat_msg & msg) {
    json calls = json::array();
    for (const auto & c : msg.tool_calls) {
        calls.push_back({ { "name", c.name }, { "arguments", c.arguments } });
    }
    return { { "content", msg.content }, { "reasoning_content", msg.reasoning_content }, { "tool_calls", calls } };
}

// Add one diff to the message a client builds from the stream (as test-chat.cpp's test does).
static void accumulate(common_chat_msg & acc, const common_chat_msg_diff & d) {
    acc.reasoning_content += d.reasoning_content_delta;
    acc.content += d.content_delta;
    if (d.tool_call_index != std::string::npos) {
        while (acc.tool_calls.size() <= d.tool_call_index) {
            acc.tool_calls.push_back({ "", "", "" });
        }
        auto & call = acc.tool_calls[d.tool_call_index];
        if (!d.tool_call_delta.name.empty()) {
            call.name = d.tool_call_delta.name;
        }
        call.arguments += d.tool_call_delta.arguments;
    }
}

// The stream a client of llama-server receives, fed `step` code points per engine step: each
// step parses all the text so far with is_partial (the last step: not partial), keeps a message
// that is not empty and sends its difference from the previous one. After each step: the code
// points fed and the message the client has built; or "error" where a step threw.
static json stream_json(const std::string & input, int step, const common_chat_parser_params & pp) {
    json            out = json::array();
    common_chat_msg prev, acc;
    size_t          points = 0, since = 0;
    for (size_t i = 1; i <= input.size() + 1; i++) {
        const bool last = i == input.size() + 1;
        if (!last) {
            if (i < input.size() && (static_cast<unsigned char>(input[i]) & 0xC0) == 0x80) {
                continue;  // inside a UTF-8 sequence
            }
            points++;
            if (++since < (size_t) step && i < input.size()) {
                continue;
            }
            since = 0;
        }
        try {
            common_chat_msg msg = common_chat_parse(input.substr(0, last ? input.size() : i), !last, pp);
            if (!msg.empty()) {
                for (const auto & d : common_chat_msg_diff::compute_diffs(prev, msg)) {
                    accumulate(acc, d);
                }
                prev = msg;
            }
        } catch (const std::exception & e) {
            out.push_back({ points, { { "error", e.what() } } });
            return out;
        }
        out.push_back({ points, msg_json(acc) });
    }
    return out;
}

static json read_case(const json & c) {
    std::ifstream     file(c.at("template_path").get<std::string>());
    std::stringstream src;
    src << file.rdbuf();
    auto tmpls = common_chat_templates_init(nullptr, src.str());

    common_chat_templates_inputs inputs;
    for (const auto & m : c.at("messages")) {
        common_chat_msg msg;
        msg.role    = m.at("role").get<std::string>();
        msg.content = m.at("content").get<std::string>();
        inputs.messages.push_back(msg);
    }
    for (const auto & t : c.at("tools")) {
        inputs.tools.push_back({ t.at("name").get<std::string>(), t.at("description").get<std::string>(),
                                 t.at("parameters").get<std::string>() });
    }
    inputs.reasoning_format    = common_reasoning_format_from_name(c.at("reasoning_format").get<std::string>());
    // null: llama-server's default (thinking on where the template supports it)
    const json & think         = c.at("enable_thinking");
    inputs.enable_thinking     = think.is_boolean() ? think.get<bool>() : common_chat_templates_support_enable_thinking(tmpls.get());
    const json kwargs = c.value("kwargs", json::object());
    for (const auto & item : kwargs.items()) {
        inputs.chat_template_kwargs[item.key()] = item.value().get<std::string>();
    }
    const json & par           = c.at("parallel_tool_calls");
    inputs.parallel_tool_calls = par.is_boolean() ? par.get<bool>()
                                                  : common_chat_templates_get_caps(tmpls.get())["supports_parallel_tool_calls"];
    inputs.tool_choice         = common_chat_tool_choice_parse_oaicompat(c.at("tool_choice").get<std::string>());
    common_chat_params params  = common_chat_templates_apply(tmpls.get(), inputs);

    common_chat_parser_params pp(params);
    pp.reasoning_format = inputs.reasoning_format;
    if (!params.parser.empty()) {
        pp.parser.load(params.parser);
    }
    const std::string input = c.at("input").get<std::string>();
    json              out   = { { "oneshot", msg_json(common_chat_parse(input, false, pp)) } };
    out["stream"]           = stream_json(input, c.value("step", 1), pp);
    return out;
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        json out;
        try {
            out = read_case(json::parse(line));
        } catch (const std::exception & e) {
            out = { { "error", e.what() } };
        }
        std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
    }
    return 0;
}
