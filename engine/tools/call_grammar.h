// The active tool schemas compiled into a grammar over bytes (call_matcher.h matches text against
// it), for one call format (call_format.h).
//
// A call is, compact (Needle):
//   call      = "{\"name\":" NAME ",\"arguments\":" ARGS(NAME) "}"
// or spaced as json.dumps writes it (", " and ": " between items, as Hugging Face's tojson):
//   call      = "{\"name\": " NAME ", \"arguments\": " ARGS(NAME) "}"
// with the format's key for the arguments ("parameters" for Llama-3). The reply is framed by the
// format's syntax; the open marker that starts a call is read by the caller, not the grammar:
//   JsonList:      [" "] "[" call (SEP call)* "]" terminator            SEP "," or ", "
//   TaggedObjects: "\n" call "\n" terminator [CLOSE] ("\n" reopening [OPEN] "\n" call "\n"
//                  terminator [CLOSE])*        (the reply may stop after any block)
//   BareObject:    call
// `terminator` is the close marker's text where it is not a token of its own ("" where it is:
// JsonList then ends at ']', and TaggedObjects waits for the CLOSE token); `reopening` the open
// marker's text where it is not a token (TaggedObjects then waits for the OPEN token). maxCalls
// bounds the calls.
// NAME is one of the declared names; ARGS is an object of that tool's declared properties, in
// declared order, optional ones skippable, required ones present; each value is of its declared
// type: strings (minLength/maxLength in characters, valid UTF-8, JSON escapes, \u escapes other
// than surrogates), integers and numbers as numeric_range.h writes them (bounds respected on its
// grid), booleans, arrays (items, minItems/maxItems), nested objects; enum and const values are
// written as their JSON literals (spaced or compact). The optional leading space lets a
// SentencePiece model write "▁[" after <tool_call>.
#pragma once

#include "tools/call_format.h"
#include "tools/numeric_range.h"
#include "tools/tool_schema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct CallGrammarOptions {
    std::string terminator;   // the close marker's text where it is text ("" where it is a token)
    bool leadingSpace = true; // JsonList: one optional space before '['
    CallFormat format = needleCallFormat(); // syntax, key, spacing, maxCalls
    std::string reopening; // TaggedObjects: the open marker's text where it is text ("" where a
                           // token)
};

enum class RuleKind : uint8_t { String, Integer, Number, Choice, Array, Object, Call };

// One value the grammar writes, compiled from a ValueSchema (or a tool call).
struct GrammarRule {
    RuleKind kind = RuleKind::String;
    int64_t minChars = 0;           // String
    int64_t maxChars = INT64_MAX;   // String
    GridRange range;                // Integer (units), Number (millionths)
    int choice = -1;                // Choice: index of its literals; Call: the header choice
    int item = -1;                  // Array: the items' rule
    int64_t minItems = 0;           // Array
    int64_t maxItems = INT64_MAX;   // Array
    std::vector<int> propertyRules; // Object: [n] in declared order
    std::vector<int>
        firstRequiredAt;         // Object: [n + 1] first required property at or after i (n: none)
    std::vector<int> keyChoices; // Object: [2 * (n + 1)] key literals at property i, without
                                 // (even index) or with (odd) a leading ','; -1 when none
    std::vector<int> toolArguments; // Call: [n_tools] the arguments object of each tool
};

// Literal alternatives, sorted so that those sharing a prefix are contiguous (a text before its
// extensions). `tags` say what each one is: a property index, a tool index, or -1.
struct LiteralChoice {
    std::vector<std::string> texts;
    std::vector<int> tags;
};

class CallGrammar {
public:
    explicit CallGrammar(const ToolSet& tools, const CallGrammarOptions& options = {});

    const CallGrammarOptions& options() const { return m_options; }
    const std::vector<GrammarRule>& rules() const { return m_rules; }
    const std::vector<LiteralChoice>& choices() const { return m_choices; }
    const CallFormat& format() const { return m_options.format; }
    int callsRule() const { return m_callsRule; } // JsonList: the array of calls
    int callRule() const { return m_callRule; }   // one call
    // TaggedObjects: the bytes that close a block ("\n" + terminator) and that open the next
    // ("\n" + reopening).
    const std::string& blockClosing() const { return m_blockClosing; }
    const std::string& blockReopening() const { return m_blockReopening; }
    int toolCount() const { return m_toolCount; }

private:
    int compileValue(const ValueSchema& schema);
    int compileObject(const std::vector<PropertySchema>& properties);
    int addChoice(std::vector<std::string> texts, std::vector<int> tags);
    int addRule(GrammarRule rule);

    CallGrammarOptions m_options;
    std::vector<GrammarRule> m_rules;
    std::vector<LiteralChoice> m_choices;
    int m_callsRule = -1;
    int m_callRule = -1;
    int m_toolCount = 0;
    std::string m_blockClosing;
    std::string m_blockReopening;
};

} // namespace sinkscope
