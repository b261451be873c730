"""§8's twenty-five questions, copied from ``book/ch08_interview.md`` (generated: do not edit).

`SOURCE` is the chapter's text from the first level heading to the drills, as MyST with
each paragraph and list item on one line;
`HEADINGS` the section each ``{ref}`` points to; `CITATIONS` who each ``{cite:p}`` is.
``tests/teaching/drills/test_questions.py`` checks all three against the book and rewrites this
file with ``--write``; `toklab.teaching.drills.questions` reads it.
"""

# ruff: noqa: E501

SOURCE = r'''(ch08-l1)=
## Level 1: what every candidate should answer

(ch08-q1)=
### Q1. Why do language models use subwords rather than words or characters?

```{admonition} Model answer
:class: dropdown

- **Words** give short sequences, but the vocabulary never stops growing as you read more text, a fixed list misses words of the next text, and `walk`, `walks`, `walked` share nothing.
- **Characters or bytes** give sequences several times longer: attention cost grows with the square of the length, the KV cache and the number of generation steps with the length. Only bytes give a small, closed vocabulary: characters are tiny for English but number in the thousands for Chinese or Japanese, and a character-level model still meets characters it never saw.
- **Subwords** keep frequent strings whole and cut rare ones into pieces, so the vocabulary is bounded and sequences stay short. Full coverage comes from what sits underneath: a byte alphabet or byte fallback. WordPiece still maps a word to `[UNK]`, and a sentencepiece model without byte fallback still emits `<unk>`.
```

**Common mistake.** "A compromise", with neither end's cost made concrete; believing that characters always make a tiny, closed vocabulary; or believing that every subword tokenizer has no unknown tokens.
**Shown in** {ref}`ch01-words`, {ref}`ch01-chars-bytes`, {ref}`ch01-coverage`.

(ch08-q2)=
### Q2. Write BPE: how do training and encoding work?

```{admonition} Model answer
:class: dropdown

- **Training.** Count the words of the corpus, each cut into symbols (bytes). Repeat: count every adjacent pair, weighted by its word's count; take the most frequent, with a fixed tie rule; merge it everywhere, left to right without overlaps; append it to the merge list. The order of that list is the model (`{abab: 3, abac: 1}` merges `a + b` first, count 7).
- **Encoding.** Cut the text into pre-tokens; in each, repeatedly merge the adjacent pair with the lowest rank until no adjacent pair is in the list. Nothing is counted and nothing is matched longest-first: with the merges `[a + b, b + c]`, `abc` becomes `ab c`; swap the ranks and it becomes `a bc`.
- **Details.** No merge crosses a pre-token boundary; `aaa` with the merge `a + a` is `aa a` (left to right); decoding joins the tokens' bytes and decodes UTF-8 once.
```

**Common mistake.** An encoder that merges the most frequent pair *of the input*: it trains again at encode time, gives tokens that depend on the surrounding text, and still decodes correctly, so a round-trip test never catches it.
**Shown in** {ref}`ch02_1-worked`, {ref}`ch02_1-encoding`, {ref}`ch02_1-pitfall`, {ref}`ch02_1-overlap`, {ref}`ch02_1-pretokens`; written from scratch, on one page, in {ref}`ch07-train`, {ref}`ch07-encode` and {ref}`ch07-chunks`; drills `bpe-train` and `bpe-encode`.

(ch08-q3)=
### Q3. Why does byte-level BPE have no out-of-vocabulary input, and what does it cost?

```{admonition} Model answer
:class: dropdown

- Its base vocabulary is the 256 byte values. Every text is a byte string, so every text has at least its byte-by-byte encoding; merges only make it shorter.
- GPT-2's `bytes_to_unicode` is a storage device: a bijection from bytes to printable characters, so that the vocabulary can be written as text. Coverage does not come from it.
- The cost: text the training data rarely saw is cut into short pieces, sometimes into fragments of one character's bytes, so low-resource languages and rare scripts pay more tokens for the same content. And a normalizer, if there is one, still rewrites the text before any byte is seen.
```

**Common mistake.** Crediting BPE itself, or the proxy alphabet, with the coverage that comes from having all 256 bytes in the vocabulary.
**Shown in** {ref}`ch03_1-oov`, {ref}`ch03_1-proxy`, {ref}`ch04_2-parallel`; drill `byte-level`.

(ch08-q4)=
### Q4. What are `Ġ` and `▁` in a token listing?

```{admonition} Model answer
:class: dropdown

- `Ġ` (U+0120) is the printable character GPT-2's table gives the space byte 0x20. It starts so many tokens because GPT-2's regex attaches a space to the word after it.
- `▁` (U+2581) is SentencePiece's whitespace symbol: the normalizer replaces spaces with it and, by default, puts one at the start of the text (the dummy prefix); the decoder turns it back into spaces.
- Both make whitespace part of the tokens, by different mechanisms: a byte remapping after pre-tokenization, against an escape inside normalization. Decoding `▁` gives back the *normalized* whitespace: collapsed runs of spaces stay collapsed.
```

**Common mistake.** Calling them odd characters without saying what they stand for, or treating the two mechanisms as one.
**Shown in** {ref}`ch03_1-proxy`, {ref}`ch03_2-g-vs-space`, {ref}`ch03_2-dummy`, {ref}`ch03_2-collapse`; drill `byte-level` (where the `Ġ` and `Ċ` land).

(ch08-q5)=
### Q5. What do WordPiece's `##` and `[UNK]` mean?

```{admonition} Model answer
:class: dropdown

- `##` marks a piece that continues a word; the first piece of a word has no prefix. Encoding is longest match first, from the left.
- If at some position no entry matches, the **whole word** becomes one `[UNK]`. With `{a, ##b, ##bc}`, `abc` is `a ##bc`; without `##bc` it is `[UNK]`, not `a ##b [UNK]`; with `{a, ab, ##bc}` it is `[UNK]` too, because `ab` matches first and the encoder never goes back to try `a` + `##bc`.
- The rule is per word: the other words of the text are unaffected. A word longer than a limit is `[UNK]` without a search: 100 characters by default in Hugging Face's implementation, 200 in Google's original BERT code.
```

**Common mistake.** Answering `a ##b [UNK]`, keeping the pieces found before the failure.
**Shown in** {ref}`ch02_2-encoding`, {ref}`ch02_2-unk`, {ref}`ch07-d03`; drill `wordpiece`.

(ch08-q6)=
### Q6. What is fertility, and how do you judge a tokenizer?

```{admonition} Model answer
:class: dropdown

- Fertility is tokens per unit of text, and the unit must be stated: per word (with a named word segmenter: Chinese has no spaces), per character, or per UTF-8 byte (its inverse, bytes per token, is usually called compression).
- Compare tokenizers on the same text in a unit no tokenizer changes (bytes), compare languages on parallel text, report the unknown-token rate where there is an unknown token, and aggregate per language before averaging across languages.
- What finally counts is system-level: tokens for your corpus, throughput, context used, and the quality of a model trained with it.
```

**Common mistake.** One "compression" number without a unit; tokens per word for Chinese without naming the segmenter (whitespace and a real segmenter give numbers that differ by a large factor on the same paragraph).
**Shown in** {ref}`ch01-fertility`, {ref}`ch01-fertility-real`, {ref}`ch04_2-parallel`; drill `fertility-bpb`.

(ch08-q7)=
### Q7. What are BOS, EOS and PAD for? Is it wrong to set PAD to EOS?

```{admonition} Model answer
:class: dropdown

- BOS marks where a sequence starts; EOS where it ends, and at generation time it is the stop signal, so the model must be trained to produce it; PAD fills a batch to one length and must be masked out of attention and out of the loss.
- PAD = EOS is common and not wrong in itself. The classic bug is masking *by value*: `labels[input_ids == pad_id] = -100` also masks every real EOS, so the model never learns to stop. Mask by position (the lengths, or the attention mask), not by ID.
- Duplicated specials: a chat template that writes BOS and a tokenizer whose post-processor adds another. Check the IDs, not the decoded text.
```

**Common mistake.** "PAD = EOS is a bug", without the mechanism that makes it one.
**Shown in** {ref}`ch00-upstream` and exercise {ref}`ch00-ex2` (where the second BOS comes from); {ref}`ch05_4-pad-eos` runs the masking bug.

(ch08-q8)=
### Q8. Does `decode(encode(x)) == x` always hold? And `encode(decode(ids)) == ids`?

```{admonition} Model answer
:class: dropdown

- The first holds only if no stage loses information: no lossy normalization (NFKC maps `Ａ①` and `A1` alike to `A1`), whitespace kept, no unknown token, specials handled symmetrically, a decoder without clean-up. Byte-level BPE without a normalizer meets all of these on valid UTF-8.
- The second fails far more often: many ID sequences decode to the same text (` hello` as one token or as ` hel` + `lo`), and the encoder returns one of them, the canonical one. `encode(decode(ids))` is a canonicalization, and applying it twice changes nothing more.
- Neither is prefix instability (Q17), which is about appending text.
```

**Common mistake.** Assuming reversibility; forgetting the second direction; confusing canonicalization with prefix instability.
**Shown in** {ref}`ch03_3-reversible`, {ref}`ch03_3-canonical`, {ref}`ch00-decode`; exercise {ref}`ch08-ex2`.

(ch08-l2)=
## Level 2: for people who have built one

(ch08-q9)=
### Q9. How do BPE, WordPiece and Unigram differ?

```{admonition} Model answer
:class: dropdown

- **Training.** BPE adds the most frequent pair; WordPiece also adds pairs, chosen in the textbook by f(xy) / (f(x) f(y)) (Hugging Face's trainer uses the plain count); Unigram goes the other way, from a large seed vocabulary pruned by the loss of likelihood, with EM in between.
- **Artifact and encoder.** A merge list replayed by rank; a vocabulary cut longest match first; a vocabulary with a log-probability per piece and Viterbi.
- **Unknown input.** WordPiece: the whole word is `[UNK]`; Unigram: `<unk>` unless byte fallback; byte-level BPE: none.
- **Randomness.** BPE-dropout blocks merges; Unigram samples from its own distribution.
- The thread through all of it: the training objective and the encoding algorithm are two separate programs.
```

**Common mistake.** Three names and who uses them, with no mechanism.
**Shown in** {ref}`ch02_4-table`, {ref}`ch02_2-score`, {ref}`ch02_2-hf`, {ref}`ch02_3-em`.

(ch08-q10)=
### Q10. How are SentencePiece and Unigram related?

```{admonition} Model answer
:class: dropdown

- SentencePiece is a framework: a normalizer (`nmt_nfkc` by default), the `▁` escape, a trainer whose `model_type` is `unigram`, `bpe`, `char` or `word`, an encoder, a decoder, and one `.model` file holding all of it. Unigram is its default model type, not its synonym.
- "No pre-tokenization" means no language-specific word splitting; normalization and the whitespace escape remain, and the trainer splits its input at whitespace by default.
- `byte_fallback=True` adds 256 `<0xXX>` pieces.
```

**Common mistake.** "SentencePiece is Unigram", or "SentencePiece does no preprocessing".
**Shown in** {ref}`ch03_2-framework`, {ref}`ch03_2-no-pretok`, {ref}`ch03_2-nmt`, {ref}`ch03_2-model-types`.

(ch08-q11)=
### Q11. How does byte fallback differ from byte-level BPE?

```{admonition} Model answer
:class: dropdown

- Byte fallback is a safety net in a model over characters: the 256 byte pieces are used only for runs no piece covers, and they never merge.
- Byte-level BPE starts from bytes: its merges learn multi-byte tokens, including pieces of characters, so a rare script can still cost fewer tokens than bytes.
- Both cover every input; neither can restore what normalization rewrote.
```

**Common mistake.** Using the two terms as synonyms, or expecting byte fallback to bring back text from before NFKC.
**Shown in** {ref}`ch03_2-bytes`, {ref}`ch03_2-fallback-vs-byte-level`, {ref}`ch07-d05`.

(ch08-q12)=
### Q12. Why not make the vocabulary as large as possible?

```{admonition} Model answer
:class: dropdown

- **Cost.** The embedding has V·d parameters, an untied output head as many again. Tying saves the parameters, not the work: the softmax scores all V rows at every step. At d = 4096, `cl100k_base`'s {glue:text}`q12-cl-rows:,` IDs take {glue:text}`q12-cl-params:.0f` million parameters per table, `o200k_base`'s {glue:text}`q12-o200k-params:.0f` million.
- **Benefit.** A larger V usually means fewer tokens for the same text: shorter sequences, a smaller KV cache, fewer generation steps.
- **Statistics.** On a fixed corpus a huge vocabulary holds many rare tokens whose rows are barely trained (glitch tokens), and each doubling of the vocabulary shortens the text by less than the one before.
- So the size is a design point that depends on languages, code, width and deployment: Llama 2's 32k {cite:p}`touvron2023llama`, Llama 3's 128K {cite:p}`grattafiori2024llama` and Gemma's 256k {cite:p}`gemmateam2024gemma` are different trade-offs, not a trend.
```

**Common mistake.** Naming only the embedding's size, which cannot explain why vocabularies keep growing; or treating the five sizes of a vocabulary as one number
(`cl100k_base` has {glue:text}`q12-cl-entries:,` entries but an ID space of
{glue:text}`q12-cl-rows:,`).
**Shown in** {ref}`ch04_1-size`, {ref}`ch04_2-five`, {ref}`ch04_2-holes`, {ref}`ch06-byt5`; drill `five-numbers`.

(ch08-q13)=
### Q13. How are numbers tokenized, and what does it do to arithmetic?

```{admonition} Model answer
:class: dropdown

- GPT-2 (`r50k_base`): a run of digits is one pre-token, and BPE cuts it into whatever merges it learned, irregularly. Llama 2 splits every number into single digits {cite:p}`touvron2023llama`. `cl100k_base`, `o200k_base` and Llama 3's tokenizer {cite:p}`grattafiori2024llama` cut digit runs into chunks of at most three, from the left: `12345` is `123` + `45`.
- `\p{N}{1,3}` caps the pre-token; BPE then encodes each chunk, and no token crosses chunk boundaries.
- Chunks from the left do not line up with place value, so the same digit position lands in different tokens in different numbers; but arithmetic also depends on data, position encoding and tools, so do not blame the tokenizer alone.
```

**Common mistake.** Blaming weak arithmetic on the tokenizer alone; reading `{1,3}` as "every number token has three digits".
**Shown in** {ref}`ch03_1-digits`; {ref}`ch05_1-digits` measures the three schemes on real vocabularies.

(ch08-q14)=
### Q14. What are subword regularization and BPE-dropout?

```{admonition} Model answer
:class: dropdown

- Unigram can sample a segmentation with probability proportional to P(z)^α {cite:p}`kudo2018subword`. α is an inverse temperature: large α approaches the Viterbi segmentation, small α spreads out. The same word comes out cut differently from epoch to epoch: augmentation, and robustness to unusual segmentations.
- BPE has no distribution to sample from. BPE-dropout skips each candidate merge with probability p while encoding {cite:p}`provilkov2020bpe`, so words come out in smaller pieces; the paper trains with p = 0.1 and encodes test data without dropout.
- Same aim, different mechanisms; deployed models encode deterministically.
```

**Common mistake.** Reversing the direction of α, or assuming BPE has probabilities to sample.
**Shown in** {ref}`ch02_3-sampling`, {ref}`ch02_1-dropout`; drills `unigram-sampling` and `bpe-dropout`.

(ch08-q15)=
### Q15. How do you compare a tokenizer's efficiency on Chinese and English fairly?

```{admonition} Model answer
:class: dropdown

- Not in tokens per word: Chinese words exist only relative to a segmenter.
- Use parallel text (the same content in both languages) and report tokens for the same content relative to English, UTF-8 bytes per token and characters per token (a Han character is 3 bytes), the unknown-token rate, and whether averages are per language or pooled.
- The training mix decides most of it: give a language less of the tokenizer's corpus and its text stays in shorter pieces.
```

**Common mistake.** English-style tokens per word for Chinese; comparing compression per byte where the question is the cost of the same content.
**Shown in** {ref}`ch04_2-parallel`, {ref}`ch04_2-chinese`, {ref}`ch04_1-mix`, {ref}`ch01-fertility`.

(ch08-q16)=
### Q16. What does Unigram's E-step use, and why not Viterbi?

```{admonition} Model answer
:class: dropdown

- Training maximises the marginal likelihood P(x) = Σ over segmentations z of Π p(zᵢ). The E-step computes each piece's expected count under the posterior over *all* segmentations (forward–backward); the M-step renormalises.
- Counting only the Viterbi segmentation is hard EM, which optimises something else. Viterbi is for encoding.
- The two are different numbers: for `abab` under the five pieces of {ref}`ch02_3-model` the best path has probability {glue:text}`q16-best:.2f`, the string {glue:text}`q16-marginal:.8f`.
```

**Common mistake.** "Viterbi in training and at inference."
**Shown in** {ref}`ch02_3-em`, {ref}`ch02_3-viterbi`, {ref}`ch07-d04`; drills `unigram-viterbi` and `unigram-forward`.

(ch08-q17)=
### Q17. What is prefix instability, and what does token healing do about it?

```{admonition} Model answer
:class: dropdown

- `encode(s[:k])` need not be a prefix of `encode(s)`: text appended later can trigger a merge across the old last boundary. With the merges `a + b`, `ab + c`: `ab` is `[ab]` and `abc` is `[abc]`.
- Who suffers: a prompt that ends mid-word (the model sees a last token it rarely saw in that position), streaming input, caches keyed on token IDs.
- Token healing drops the prompt's last tokens that may not be final and constrains generation so that its output starts with the dropped bytes. It is an inference-side wrapper, not a model ability, and one token is not always enough to drop.
```

**Common mistake.** Knowing only the trailing-space case; thinking healing is something the model does.
**Shown in** {ref}`ch07-d06`; exercise {ref}`ch08-ex1`; drill `prefix-instability`; {ref}`ch05_3-measured` measures it on `cl100k_base`, and {ref}`ch05_3-healing` builds token healing.

(ch08-q18)=
### Q18. What are glitch tokens such as SolidGoldMagikarp?

```{admonition} Model answer
:class: dropdown

- Tokens that are in the vocabulary but that the model almost never saw during training, so their embedding rows barely move from where they started. The report that named them found them among the tokens closest to the centroid of all the embeddings, and models that could not repeat them {cite:p}`rumbelow2023solidgoldmagikarp`.
- The usual explanation is a mismatch between the tokenizer's training text and the model's: strings frequent in the first, cleaned out of the second. The symptoms are a model that cannot repeat the token, or behaves strangely around it.
- Detection: indicators computed from the embedding rows, confirmed by prompting {cite:p}`land2024fishing`. A new token that is mean-initialised and never trained is the same thing made on purpose.
```

**Common mistake.** Telling it as folklore, without the chain vocabulary–corpus mismatch → untrained rows.
**Shown in** {ref}`ch04_3-glitch`; {ref}`ch05_2-vocabulary` looks for them in real vocabularies, and {ref}`ch05_2-mechanism` shows the mechanism on a model.

(ch08-l3)=
## Level 3: systems

(ch08-q19)=
### Q19. Derive bits per byte. Why can perplexities of different tokenizers not be compared?

```{admonition} Model answer
:class: dropdown

- Loss per token is the total negative log-likelihood divided by the number of tokens, and perplexity is its exponential. The denominator is the tokenizer's own count, so cutting the same text into more, easier pieces lowers it without predicting anything better.
- The bytes of the text do not depend on the tokenizer: BPB = (−Σ ln p(tᵢ | t₍<ᵢ₎)) / (B ln 2). Same bytes and same total NLL give the same BPB. 4.0 nats on 8 bytes is a loss of 2.0 per token with 2 tokens and 1.0 with 4, and {glue:text}`q19-bpb:.4f` bits per byte both times.
- BPB = loss per token × tokens per byte / ln 2; and both models must have scored the same bytes, so a lossy normalizer has to be accounted for.
```

**Common mistake.** Comparing per-token perplexities across tokenizers; not checking that normalization left the scored text the same.
**Shown in** {ref}`ch01-bpb`; drill `fertility-bpb`.

(ch08-q20)=
### Q20. How do you add tokens to a trained model safely?

```{admonition} Model answer
:class: dropdown

- Freeze the old world: old IDs, old merge ranks, normalization. Control symbols go into the special channel; domain words are ordinary tokens with merges appended after every existing rank, which changes old encodings exactly where the new token joins old parts: a regression test measures where.
- Resize both ends (embedding, output head) and the optimizer's state; a tied head must still be the same array.
- Initialise new rows from the mean of the rows of the token's old segmentation (for a control token: of a description), then train them: mean initialisation alone leaves a near-glitch token. New output rows join the softmax, so old predictions shift too.
- Regression: old test texts re-encode ID for ID except where new tokens join, specials behave as before, round trips hold.
```

**Common mistake.** Editing the tokenizer file and stopping there; forgetting the head, the optimizer state or the tie.
**Shown in** {ref}`ch04_3-freeze`, {ref}`ch04_3-lexical`, {ref}`ch04_3-resize`, {ref}`ch04_3-glitch`, {ref}`ch07-d08`.

(ch08-q21)=
### Q21. Which system components need the tokenizer to be aligned, and why?

```{admonition} Model answer
:class: dropdown

- **Speculative decoding**: the target model verifies the draft's tokens by comparing the two models' probabilities of the same token, so both need the same vocabulary {cite:p}`leviathan2023fast,chen2023accelerating`. Different tokenizers need a string-level scheme of their own.
- **Distillation**: matching logits position by position needs the same vocabulary and the same positions. Matching hidden states across two tokenizers needs an alignment of their tokens' spans in the text, since position k is a different piece of text in each. Sequence-level distillation (training on the teacher's text) needs neither.
- **Prefix and KV caches**: a hit needs an exact prefix of token IDs. The same string can become different IDs (prefix instability, a changed template or tokenizer version), so "same text" is not enough; for a patch-based model the patcher is part of the key.
```

**Common mistake.** "Change the tokenizer and the cache breaks", with no precise condition; not knowing that sequence-level distillation crosses tokenizers.
**Shown in** {ref}`ch06-obstacles`, {ref}`ch07-d06`; {ref}`ch05_6-ids`, {ref}`ch05_6-positions` and {ref}`ch05_6-cache` take the components one by one.

(ch08-q22)=
### Q22. Design offset mapping: how do tokens point back into the original text?

```{admonition} Model answer
:class: dropdown

- Name the coordinates: characters of the normalized text, code points of the original, UTF-8 bytes, UTF-16 code units (what JavaScript counts), grapheme clusters.
- Normalization changes lengths: NFKC turns `ﬃ` into `ffi` (1 to 3 code points) and `Ａ` into `A` (one code point either way, 3 bytes to 1); NFC turns `e` + U+0301 into `é` (2 to 1). Without an alignment map the tokenizer's offsets, which are in normalized text, cannot be mapped back.
- Keep a map from every normalized character to its source span (one-to-many and many-to-one), report offsets in a declared unit, and test them in bytes and in code points. Hugging Face's fast tokenizers and sentencepiece report offsets in the original text through exactly such a map.
```

**Common mistake.** "Use `return_offsets_mapping`", without the two layers of coordinates underneath.
**Shown in** {ref}`ch03_3-coordinates`, {ref}`ch03_3-offsets`, {ref}`ch03_3-nfkc`, {ref}`ch03_3-e-acute`; {ref}`ch05_5-normalization` and {ref}`ch05_5-sentencepiece` follow them from tokens back to the original text.

(ch08-q23)=
### Q23. You are training the tokenizer for a new LLM. How do you design the corpus and the configuration?

```{admonition} Model answer
:class: dropdown

- **Corpus.** The language mix decides what each language pays (rebalance on purpose, and record it); the share of code and maths; deduplication; and the same cleaning and normalization as the model's training data, so that every token is seen there.
- **Configuration.** The vocabulary size from the V·d bill and the length targets; the digit rule; byte-level or byte fallback for coverage; special and control slots reserved once, up front.
- **Acceptance.** Fertility per language on parallel text; round trips (exact for a lossless pipeline, to the normal form otherwise); small models trained with candidate tokenizers compared in BPB; a regression baseline; every file versioned and hashed.
```

**Common mistake.** Starting with "BPE or Unigram?" before the corpus, which decides more of the outcome.
**Shown in** {ref}`ch04_1-mix`, {ref}`ch04_1-knobs`, {ref}`ch04_1-dedup`, {ref}`ch04_1-normalization`, {ref}`ch04_1-size`.

(ch08-q24)=
### Q24. ByT5, MegaByte, BLT: how does each work, and what stands in their way?

```{admonition} Model answer
:class: dropdown

- **ByT5**: UTF-8 bytes straight in, {glue:text}`q24-byt5` IDs (3 specials, 256 bytes, 125 sentinels), an encoder–decoder with a heavy encoder {cite:p}`xue2022byt5`; robust, and sequences several times longer.
- **MegaByte**: fixed patches of P bytes; a global model over patches and a local model within each, which spreads the quadratic cost {cite:p}`yu2023megabyte`.
- **BLT**: dynamic patches that start where a small byte model's next-byte entropy is high, so hard regions get more patches; a local encoder, a global latent transformer, a local decoder {cite:p}`pagnoni2024byte`. CANINE is an encoder over hashed code points with downsampling {cite:p}`clark2022canine`.
- "Tokenizer-free" means no learned subword vocabulary; UTF-8, special IDs and patching remain. The obstacles: training cost per byte, inference stacks built around tokens, and what a cache keys on.
```

**Common mistake.** "All of them feed bytes to a Transformer"; declaring tokenization solved.
**Shown in** {ref}`ch06-byt5`, {ref}`ch06-megabyte`, {ref}`ch06-blt`, {ref}`ch06-canine`, {ref}`ch06-obstacles`.

(ch08-q25)=
### Q25. Chat templates and special-token injection: how do you defend, and what goes wrong in training?

```{admonition} Model answer
:class: dropdown

- A user's text that contains `<|im_end|>` must not become the control token. Whether it does depends on the API: tiktoken refuses a disallowed special by raising, `allowed_special` turns it into its ID, and `disallowed_special=()` encodes it as ordinary text. The real defence is separate channels: the template's control tokens are inserted as IDs by code, and user content is encoded with special-token recognition off. Tests compare IDs, because both versions decode to the same text.
- Specials are matched before normalization, or a full-width lookalike becomes a control token after NFKC.
- Training side: the attention mask is not the loss mask; loss on assistant turns only; document boundaries when packing; BOS written twice; PAD = EOS masked by value.
- Version the whole tokenizer (normalizer, regex, merges, specials, template, library versions): a `vocab.json` alone drifts silently.
```

**Common mistake.** "Filter special strings out of the user's input", which neither covers lookalikes nor fixes the API configuration, and ignores the training side.
**Shown in** {ref}`ch00-upstream`, {ref}`ch03_2-symbols`; {ref}`ch05_4-injection`, {ref}`ch05_4-roles` and {ref}`ch05_4-packing` cover injection, masks and packing, {ref}`ch05_7-components` what must be frozen and hashed.
'''

HEADINGS = {
    'ch00-decode': '§0 “Decoding runs backwards, and is not an exact inverse”',
    'ch00-ex2': '§0 “Split-channel chat encoding”',
    'ch00-upstream': '§0 “Upstream: special tokens and chat templates”',
    'ch01-bpb': '§1 “Bits per byte: a loss you can compare across tokenizers”',
    'ch01-chars-bytes': '§1 “Characters and bytes: small alphabets, long sequences”',
    'ch01-coverage': '§1 “Three tiers of coverage”',
    'ch01-fertility': '§1 “Fertility needs a declared denominator”',
    'ch01-fertility-real': '§1 “Four vocabularies on four kinds of text”',
    'ch01-words': '§1 “Words: a vocabulary that never stops growing”',
    'ch02_1-dropout': '§2.1 “BPE-dropout: the same merges, a random path”',
    'ch02_1-encoding': '§2.1 “Encoding: frozen ranks, no counting”',
    'ch02_1-overlap': '§2.1 “Overlapping pairs”',
    'ch02_1-pitfall': '§2.1 “The classic wrong answer: counting again at encode time”',
    'ch02_1-pretokens': '§2.1 “Merges stay inside pre-tokens”',
    'ch02_1-worked': '§2.1 “A worked example”',
    'ch02_2-encoding': '§2.2 “Encoding: longest match first, and no way back”',
    'ch02_2-hf': "§2.2 “What Hugging Face's `WordPieceTrainer` really does”",
    'ch02_2-score': '§2.2 “The score: frequency relative to the parts”',
    'ch02_2-unk': '§2.2 “Whole-word `[UNK]` on text the vocabulary was not built for”',
    'ch02_3-em': '§2.3 “Training: EM with expected counts”',
    'ch02_3-model': '§2.3 “The model: a probability for every piece”',
    'ch02_3-sampling': '§2.3 “Subword regularization: sampling with an inverse temperature”',
    'ch02_3-viterbi': '§2.3 “Viterbi: the best single path”',
    'ch02_4-table': '§2.4 “The table”',
    'ch03_1-digits': '§3.1 “Digits: what `\\p{N}{1,3}` does and does not guarantee”',
    'ch03_1-oov': '§3.1 “No out-of-vocabulary input, and what rare characters cost”',
    'ch03_1-proxy': '§3.1 “The proxy alphabet: `bytes_to_unicode`”',
    'ch03_2-bytes': '§3.2 “Byte fallback is not byte-level BPE”',
    'ch03_2-collapse': '§3.2 “Collapsing extra whitespace”',
    'ch03_2-dummy': '§3.2 “The dummy prefix”',
    'ch03_2-fallback-vs-byte-level': '§3.2 “Measured: a safety net against a foundation”',
    'ch03_2-framework': '§3.2 “One framework, four models”',
    'ch03_2-g-vs-space': '§3.2 “`Ġ` against `▁`”',
    'ch03_2-model-types': '§3.2 “Model type and vocabulary size”',
    'ch03_2-nmt': '§3.2 “Normalization: `nmt_nfkc` is a table, not an algorithm”',
    'ch03_2-no-pretok': '§3.2 “"No pre-tokenization", stated precisely”',
    'ch03_2-symbols': '§3.2 “User-defined and control symbols”',
    'ch03_3-canonical': '§3.3 “The other direction: `encode(decode(ids))` is canonicalization”',
    'ch03_3-coordinates': '§3.3 “Four ways to count a string”',
    'ch03_3-e-acute': '§3.3 “One letter, two spellings: `é`”',
    'ch03_3-nfkc': '§3.3 “Compatibility normalization is lossy: NFKC”',
    'ch03_3-offsets': '§3.3 “Offsets through normalization”',
    'ch03_3-reversible': '§3.3 “When does `decode(encode(x)) == x` hold?”',
    'ch04_1-dedup': '§4.1 “Duplicates buy vocabulary”',
    'ch04_1-knobs': '§4.1 “Which trainer has which knob”',
    'ch04_1-mix': '§4.1 “The language mix decides who pays”',
    'ch04_1-normalization': '§4.1 “Normalization must match at training and at serving time”',
    'ch04_1-size': '§4.1 “Vocabulary size is a bill with two sides”',
    'ch04_2-chinese': '§4.2 “What a Chinese token is”',
    'ch04_2-five': '§4.2 “The five numbers, computed from the files”',
    'ch04_2-holes': '§4.2 “Holes in the ID space”',
    'ch04_2-parallel': '§4.2 “What each language pays, on parallel text”',
    'ch04_3-freeze': '§4.3 “Freeze the old world, choose the channel”',
    'ch04_3-glitch': '§4.3 “Mean initialisation is half a glitch token”',
    'ch04_3-lexical': '§4.3 “A lexical addition changes exactly where the new token joins old parts”',
    'ch04_3-resize': '§4.3 “Resize both ends, and the optimizer”',
    'ch05_1-digits': '§5.1 “Three generations of digit rules”',
    'ch05_2-mechanism': '§5.2 “The mechanism on a model”',
    'ch05_2-vocabulary': '§5.2 “What the vocabulary file alone reveals”',
    'ch05_3-healing': '§5.3 “Token healing”',
    'ch05_3-measured': '§5.3 “How often, on real text”',
    'ch05_4-injection': '§5.4 “Injection: what a registered special in user text becomes”',
    'ch05_4-packing': '§5.4 “Packing”',
    'ch05_4-pad-eos': '§5.4 “The PAD = EOS bug”',
    'ch05_4-roles': '§5.4 “Three roles, two masks”',
    'ch05_5-normalization': '§5.5 “Through a lossy normalizer”',
    'ch05_5-sentencepiece': '§5.5 “SentencePiece: spans by origin”',
    'ch05_6-cache': '§5.6 “What a prefix cache keys on”',
    'ch05_6-ids': '§5.6 “One string, three sets of IDs”',
    'ch05_6-positions': '§5.6 “Positions almost line up, IDs do not”',
    'ch05_7-components': '§5.7 “The components”',
    'ch06-blt': '§6 “BLT: patches where the next byte is hard”',
    'ch06-byt5': '§6 “ByT5: bytes in, 384 IDs”',
    'ch06-canine': '§6 “CANINE: code points, hashes and downsampling”',
    'ch06-megabyte': '§6 “MegaByte: fixed patches, a global and a local model”',
    'ch06-obstacles': '§6 “What still stands in the way”',
    'ch07-chunks': '§7 “4. Byte-level BPE over chunks”',
    'ch07-d03': '§7 “5. WordPiece: longest match first”',
    'ch07-d04': '§7 “6. Unigram: Viterbi and forward, in log space”',
    'ch07-d05': '§7 “7. Byte fallback beside NFKC”',
    'ch07-d06': '§7 “8. Prefix instability”',
    'ch07-d08': '§7 “10. Extending a vocabulary, and its regression test”',
    'ch07-encode': '§7 “3. Encoding: ranks, never counts”',
    'ch07-train': '§7 “2. Training: count, merge, record”',
    'ch08-ex1': '§8 “How many tokens must healing back off?”',
    'ch08-ex2': '§8 “Another ID sequence for the same text”',
}

CITATIONS = {
    'chen2023accelerating': 'Chen et al. 2023',
    'clark2022canine': 'Clark et al. 2022',
    'gemmateam2024gemma': 'Gemma Team et al. 2024',
    'grattafiori2024llama': 'Grattafiori et al. 2024',
    'kudo2018subword': 'Kudo 2018',
    'land2024fishing': 'Land and Bartolo 2024',
    'leviathan2023fast': 'Leviathan et al. 2023',
    'pagnoni2024byte': 'Pagnoni et al. 2024',
    'provilkov2020bpe': 'Provilkov et al. 2020',
    'rumbelow2023solidgoldmagikarp': 'Rumbelow and Watkins 2023',
    'touvron2023llama': 'Touvron et al. 2023',
    'xue2022byt5': 'Xue et al. 2022',
    'yu2023megabyte': 'Yu et al. 2023',
}
