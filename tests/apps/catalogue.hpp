#pragma once
// The error catalogue's entries (catalogue_test.cpp runs them), written by input kind: command-line flags,
// --input shapes and layer strings (catalogue_cli.cpp), JSON model files (catalogue_json.cpp), ONNX files
// (catalogue_onnx.cpp, when this build reads ONNX).
#include <map>
#include <string>
#include <vector>

namespace ridgeline::test::catalogue {

struct entry {
    std::string name;                          // unique, [A-Za-z0-9_]
    std::vector<std::string> args;             // "{dir}" is replaced by the entry's folder
    int exit_code = 1;
    std::vector<std::string> key_words;        // each must appear in the error line
    std::map<std::string, std::string> files;  // written to {dir} first: name -> bytes
};

/// Adds an entry: run `args`, expect exit `code` and one error line containing every key word.
void add(std::string name, std::vector<std::string> args, int code, std::vector<std::string> words,
         std::map<std::string, std::string> files = {});
/// `summary --layer L --input S...`: exit 2 (a usage mistake: the layer string or --input the user typed) with the
/// key words.
void layer(std::string name, std::string text, std::vector<std::string> inputs, std::vector<std::string> words,
           int code = 2);
/// `summary --model-file {dir}/model.json` of `json`: exit 1; the key words usually start with the JSON path.
void model_file(std::string name, std::string json, std::vector<std::string> words, std::vector<std::string> extra = {});
/// A one-input model file with the given layers (JSON array text), input shape `shape` (JSON array text).
std::string net(const std::string& layers, const std::string& shape = "[1, 3, 8, 8]");

void flags();        // command-line flags
void shapes();       // --input shapes
void layers();       // layer strings
void json_models();  // JSON model files
void onnx_models();  // ONNX files (defined when this build reads ONNX)

}  // namespace ridgeline::test::catalogue
