// What the chat code links against but the harness never reaches: libllama's model and vocabulary
// functions (reached only when a model is loaded; the harness passes none) and ggml's abort (the
// target of GGML_ASSERT). Building them would mean building ggml and the model loader; instead
// each says what it is. The harness always renders with jinja (llama-server's default), so
// llama.cpp's table of built-in, non-jinja templates is not linked either: asked for one, the
// answer is "unknown template" (-1), as for a template that table does not know.

#include "ggml.h"
#include "llama.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

[[noreturn]] static void no_model(const char * what) {
    std::fprintf(stderr, "pb-llamacpp-harness: %s needs a loaded model, and the harness has none\n", what);
    std::abort();
}

extern "C" {

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    std::fprintf(stderr, "%s:%d: ", file, line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fprintf(stderr, "\n");
    std::abort();
}

const llama_vocab * llama_model_get_vocab(const llama_model *) { no_model("llama_model_get_vocab"); }
const char * llama_model_chat_template(const llama_model *, const char *) { no_model("llama_model_chat_template"); }
llama_token llama_vocab_bos(const llama_vocab *) { no_model("llama_vocab_bos"); }
llama_token llama_vocab_eos(const llama_vocab *) { no_model("llama_vocab_eos"); }
bool llama_vocab_get_add_bos(const llama_vocab *) { no_model("llama_vocab_get_add_bos"); }
bool llama_vocab_get_add_eos(const llama_vocab *) { no_model("llama_vocab_get_add_eos"); }
int32_t llama_token_to_piece(const llama_vocab *, llama_token, char *, int32_t, int32_t, bool) {
    no_model("llama_token_to_piece");
}

int32_t llama_chat_apply_template(const char *, const llama_chat_message *, size_t, bool, char *, int32_t) {
    return -1;
}

}  // extern "C"
