// Inline math (inline_math.h): erf, pow, exp and log on f32 as LLVM IR, and the IfThen block helper.
#include "hal/llvm/inline_math.h"

#include <llvm/ADT/bit.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

// hal/llvm/fit/fit_erf.py: erf(x) = x·P(x²) for |x| < 1, and 1 − C(min(|x|, 3.92) − m)
// above, C fitting erfc on [1, 3.92]; max 2 ULP in f32 over 500,000 inputs.
constexpr float kErfSmall[] = {1.1283791065216064f,    -0.3761262595653534f,
                               0.1128358542919159f,    -0.026853816583752632f,
                               0.0051883370615541935f, -0.000801027868874371f,
                               7.854151772335172e-05f};
constexpr float kErfcBig[] = {
    0.000503326824400574f,   -0.0026561934500932693f, 0.006535762455314398f,
    -0.009832995012402534f,  0.009904831647872925f,   -0.006797654554247856f,
    0.002963501960039139f,   -0.00046216868213377893f, -0.0003911265230271965f,
    0.0003016773844137788f,  -5.166768096387386e-05f, -2.5421042664675042e-05f,
    9.12467839953024e-06f};
constexpr float kErfcBigMiddle = 2.4600000381469727f;
// hal/llvm/fit/fit_erf_table.py: erf on [k/4, (k + 1)/4) as Σ_j kErfTable[j][k]·u^j,
// u = 4x − k; interval 0 (c0 = 0) for relative error, max 2 ULP in f32 over
// 500,000 inputs. One row is one zmm register: a lane's coefficient is a vpermps.
constexpr float kErfTable[6][16] = {
    {0.0f, 0.27632638812065125f, 0.5204998850822449f, 0.7111556529998779f,
     0.8427007794380188f, 0.9229001402854919f, 0.9661051630973816f, 0.9866716861724854f,
     0.9953222870826721f, 0.9985373020172119f, 0.9995930194854736f, 0.9998993873596191f,
     0.9999778866767883f, 0.9999957084655762f, 0.9999992847442627f, 0.9999998807907104f},
    {0.2820947766304016f, 0.26500311493873596f, 0.2196952849626541f, 0.1607326716184616f,
     0.10377700626850128f, 0.0591304711997509f, 0.02973269857466221f, 0.013193786144256592f,
     0.005166731774806976f, 0.0017855531768873334f, 0.0005445515271276236f, 0.0001465592795284465f,
     3.480924351606518e-05f, 7.295942850760184e-06f, 1.34949880248314e-06f, 2.2034305402485188e-07f},
    {4.3985514253108704e-07f, -0.01655779592692852f, -0.027457721531391144f, -0.03013618476688862f,
     -0.025945665314793587f, -0.01848042570054531f, -0.011151209473609924f, -0.0057727256789803505f,
     -0.0025832129176706076f, -0.0010040783090516925f, -0.0003401261055842042f, -0.00010064699745271355f,
     -2.606181260489393e-05f, -5.913212589803152e-06f, -1.17679678623972e-06f, -2.0632187158753368e-07f},
    {-0.005880199372768402f, -0.004851608071476221f, -0.0023068562150001526f, 0.0004129595763515681f,
     0.0021679264027625322f, 0.0026272002141922712f, 0.002174523426219821f, 0.0014107986353337765f,
     0.0007528539863415062f, 0.00033812285983003676f, 0.00012946935021318495f, 4.260815694578923e-05f,
     1.2117267033318058e-05f, 2.989291942867567e-06f, 6.415210691557149e-07f, 1.22812437552966e-07f},
    {7.916358299553394e-06f, 0.0005355423199944198f, 0.0007513969321735203f, 0.0006007892661727965f,
     0.0002596661797724664f, -4.22950106440112e-05f, -0.00018721478409133852f, -0.00019230952602811158f,
     -0.00013349985238164663f, -7.199820538517088e-05f, -3.170436684740707e-05f, -1.1678240298351739e-05f,
     -3.6485666896624025e-06f, -9.754090797287063e-07f, -2.2448455183621263e-07f, -4.894819838341391e-08f},
    {0.00010346055933041498f, 4.424310463946313e-05f, -2.6349058316554874e-05f, -6.507611396955326e-05f,
     -5.959373083896935e-05f, -2.993088128278032e-05f, -2.272588972118683e-06f, 1.1043868653359823e-05f,
     1.2145473192504141e-05f, 8.165050530806184e-06f, 4.139692464377731e-06f, 1.6892236089915968e-06f,
     5.715862698707497e-07f, 1.6306771044583002e-07f, 3.9632539028389147e-08f, 1.0558567353768922e-08f},
};
constexpr float kErfSplit = 1.0f;
constexpr float kErfOne = 3.92f;  // erfc(3.92) < 2^-25: erf rounds to ±1 from here

// hal/llvm/fit/fit_tanh.py: expm1(r) = r + r²·M(r) for |r| ≤ ln(2)/2 (relative
// error 1.3e-8); tanh rounds to ±1 in f32 from |x| = 9.01 on.
constexpr float kTanhExpm1[] = {0.4999999701976776f, 0.1666654348373413f, 0.04166720062494278f,
                                0.008366488851606846f, 0.0013882432831451297f};
constexpr float kTanhClamp = 9.1f;

// pow's f64 tier bound: |y·log2 x| below it keeps the f32 result normal.
constexpr double kPowExponentLimit = 126.0;
// pow's f32 tier bound on |y·log2 m| (PowBySeries).
constexpr float kPowF32ProductLimit = 8.0f;

llvm::Value* Fma(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

llvm::Value* Unary(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::Value* x) {
  return b.CreateIntrinsic(id, {x->getType()}, {x});
}

// Σ c[k]·t^k by Horner's rule with FMAs.
template <typename T>
llvm::Value* Horner(llvm::IRBuilder<>& b, const std::vector<T>& c, llvm::Value* t) {
  llvm::Type* ty = t->getType();
  llvm::Value* r = llvm::ConstantFP::get(ty, static_cast<double>(c.back()));
  for (size_t k = c.size() - 1; k-- > 0;)
    r = Fma(b, r, t, llvm::ConstantFP::get(ty, static_cast<double>(c[k])));
  return r;
}

// log2(m) = (2 / ln 2)·atanh(s), s = (m − 1) / (m + 1): s·Σ c_k·s^2k with
// c_k = 2 / (ln 2·(2k + 1)). For m in [√½, √2], s² ≤ 0.0295 and six terms
// leave a relative error below 2^-34, which keeps y·log2 x (|·| < 126)
// within 2^-27 of the exact exponent.
std::vector<double> Log2SeriesCoefficients() {
  std::vector<double> c;
  for (int k = 0; k < 6; ++k) c.push_back(2.0 / (std::log(2.0) * (2 * k + 1)));
  return c;
}

// hal/llvm/fit/fit_exp_log.py: e^r = 1 + r·E(r) for |r| ≤ ln(2)/2 and
// 2^f = 1 + f·X(f) for |f| ≤ ½ (relative error 2^-29 each; the constant 1
// makes e^0 and 2^0 exact), and the tail of log2 m = c0·s + s³·T(s²) for
// s² ≤ 0.0295 (relative error 2^-30 of log2 m).
constexpr float kExpR[] = {1.0f, 0.4999999403953552f, 0.16666431725025177f, 0.04166800156235695f,
                           0.008374137803912163f, 0.001384355709888041f};
constexpr float kExp2F[] = {0.6931471824645996f, 0.24022647738456726f, 0.055503323674201965f,
                            0.009618437848985195f, 0.0013398845912888646f, 0.0001535325573058799f};
constexpr float kLog2Tail[] = {0.9617982506752014f, 0.5767547488212585f, 0.4309382140636444f};

// 1 + v·P(v), P's coefficients `c`.
llvm::Value* OnePlus(llvm::IRBuilder<>& b, const float* c, size_t n, llvm::Value* v) {
  return Fma(b, v, Horner(b, std::vector<float>(c, c + n), v), llvm::ConstantFP::get(v->getType(), 1.0));
}
llvm::Value* Exp2OfFraction(llvm::IRBuilder<>& b, llvm::Value* f) {
  return OnePlus(b, kExp2F, std::size(kExp2F), f);
}

// hal/llvm/fit/fit_log_table.py: log on 16-lane AVX-512 vectors, x = 2^k·z with
// z in [0.699, 1.398) (bits − 0x3F330000), 16 intervals of z by the next
// four bits; c ≈ 1/centre (1 exactly on the interval holding 1), −log c
// within 1.1e-12 of its f32 value, log1p(r) = r + r²·P(r) for r in
// [−0.029, 0.031] (relative error 2.5e-10); max 1 ULP in f32 over 500,000 inputs.
constexpr float kLogC[] = {
    1.3991581201553345f, 1.3394546508789062f, 1.2870872020721436f, 1.2351411581039429f,
    1.1887508630752563f, 1.1493171453475952f, 1.1077672243118286f, 1.0693553686141968f,
    1.0350602865219116f, 1.0f, 0.9490917325019836f, 0.8952928185462952f,
    0.8467947840690613f, 0.804736852645874f, 0.7660297751426697f, 0.7313842177391052f};
constexpr float kLogNegLogC[] = {
    -0.3358707129955292f, -0.29226255416870117f, -0.25238168239593506f, -0.2111852616071701f,
    -0.17290306091308594f, -0.13916797935962677f, -0.10234647989273071f, -0.06705600768327713f,
    -0.0344596728682518f, 0.0f, 0.05224982276558876f, 0.11060444265604019f,
    0.16629689931869507f, 0.21723994612693787f, 0.2665342390537262f, 0.3128163516521454f};
constexpr float kLog1pP[] = {
    -0.4999999701976776f, 0.33333370089530945f, -0.25017884373664856f, 0.19942410290241241f};
constexpr uint32_t kLogTableOffset = 0x3F330000u;

// hal/llvm/fit/fit_pow_table.py: pow on whole 16-lane AVX-512 vectors. x = 2^k·m,
// m in [0.75, 1.5) (bits − 0x3F400000), 32 intervals of m by the next five
// bits; c has at most 7 significant bits, so r = m·c − 1 is exact (the
// script checks every m), and c = 1 on the two intervals beside m = 1;
// −log2 c as two f32; log2(1 + r) = r·(1/ln 2) + r²·Q(r) for r in
// [−0.0205, 0.0312] (relative error 1.5e-10); 2^(j/32) as two f32 and
// 2^g = 1 + g·X(g) for |g| ≤ 1/64 (1e-10). Within 0.71 ULP of the exact power
// wherever |y·log2 m| ≤ 16 (kPowTableProductLimit), 0.85 to 32, 2.4 to 96.
constexpr float kPowC[] = {
    1.3125f, 1.296875f, 1.265625f, 1.25f, 1.21875f, 1.203125f, 1.171875f, 1.15625f, 1.125f, 1.109375f,
    1.09375f, 1.078125f, 1.0625f, 1.046875f, 1.03125f, 1.0f, 1.0f, 0.953125f, 0.921875f, 0.90625f, 0.875f,
    0.8515625f, 0.828125f, 0.8125f, 0.7890625f, 0.7734375f, 0.75f, 0.734375f, 0.71875f, 0.703125f, 0.6875f,
    0.671875f};
constexpr float kPowNegLog2C[] = {
    -0.39231741428375244f, -0.3750394284725189f, -0.3398500084877014f, -0.32192808389663696f,
    -0.28540220856666565f, -0.2667865455150604f, -0.22881868481636047f, -0.20945335924625397f,
    -0.1699250042438507f, -0.1497471183538437f, -0.12928301095962524f, -0.10852445662021637f,
    -0.08746284246444702f, -0.0660891905426979f, -0.0443941205739975f, 0.0f, 0.0f, 0.06926266103982925f,
    0.11735694855451584f, 0.14201900362968445f, 0.19264507293701172f, 0.23181568086147308f,
    0.27207955718040466f, 0.2995602786540985f, 0.34178853034973145f, 0.37064337730407715f,
    0.41503751277923584f, 0.44541114568710327f, 0.476438045501709f, 0.5081468820571899f, 0.5405683517456055f,
    0.573735237121582f};
constexpr float kPowNegLog2CLow[] = {
    -8.495008252396019e-09f, -2.8744058244711823e-09f, 5.603076669302709e-09f, -1.0990725662907153e-08f,
    -1.0295583052766233e-08f, 4.820158938656505e-09f, -5.679520409529459e-09f, -6.382695705298147e-09f,
    2.8015383346513545e-09f, -1.1508383135350186e-09f, -5.9853411116250754e-09f, -1.5795267871432372e-10f,
    1.2141075922400546e-09f, 8.492546943461576e-11f, 1.215544109811617e-09f, 0.0f, 0.0f,
    1.3972845103182863e-09f, 2.083642813843767e-09f, 1.2427434636919088e-09f, 5.005384107192867e-09f,
    -5.638399525054183e-09f, -1.174360342304226e-08f, 3.2048093068226535e-09f, -1.3101526086245485e-08f,
    2.616313166114992e-09f, -1.3500391915499677e-08f, 2.635259344074825e-09f, -1.5587218182844254e-09f,
    2.161313616966254e-08f, 2.961709810733737e-08f, 8.176320065444997e-09f};
constexpr float kPowLog2Q[] = {-0.7213475108146667f, 0.48090049624443054f, -0.3607995808124542f,
                               0.28277701139450073f};
constexpr float kPowExp2G[] = {
    0.6931471824645996f, 0.24022847414016724f, 0.05550360679626465f};
constexpr float kPowExp2J[] = {
    1.0f, 1.0218971967697144f, 1.0442737340927124f, 1.0671404600143433f, 1.0905077457427979f,
    1.114386796951294f, 1.1387885808944702f, 1.1637248992919922f, 1.1892070770263672f, 1.215247392654419f,
    1.2418577671051025f, 1.2690509557724f, 1.2968395948410034f, 1.3252366781234741f, 1.3542555570602417f,
    1.3839099407196045f, 1.4142135381698608f, 1.4451807737350464f, 1.4768261909484863f, 1.5091644525527954f,
    1.5422108173370361f, 1.5759809017181396f, 1.610490322113037f, 1.6457555294036865f, 1.6817928552627563f,
    1.7186193466186523f, 1.7562521696090698f, 1.7947090864181519f, 1.8340080976486206f, 1.8741676807403564f,
    1.9152065515518188f, 1.9571441411972046f};
constexpr float kPowExp2JLow[] = {
    0.0f, -4.811559861650494e-08f, 4.8334701574503924e-08f, -5.9337519786595294e-08f, -1.3077539939843064e-08f,
    -5.435540018083884e-08f, 5.386222312608879e-08f, -4.051441493402308e-08f, 3.797635272917432e-08f,
    -3.267394887984665e-08f, 4.496838101886169e-08f, 1.419333317542737e-09f, -4.018999533172973e-08f,
    -3.496373324196611e-08f, -1.0123349269974824e-08f, -5.875577357983275e-08f, 2.4203234971764687e-08f,
    3.324199937537742e-08f, -4.500898853621038e-08f, -2.4959373234878512e-08f, 8.070904833346049e-09f,
    -5.661025426206834e-08f, 9.836217174097328e-09f, -5.124972091152813e-08f, -2.4755326677450284e-08f,
    -4.8496175963919086e-08f, -9.235770370707996e-09f, -1.141504490931311e-08f, -1.1239277952768134e-08f,
    -4.663005626071026e-08f, 9.845328108326612e-09f, -1.7021804410433106e-08f};
constexpr uint32_t kPowTableOffset = 0x3F400000u;
constexpr float kPowTableProductLimit = 16.0f;

// exp's fast path bound: below it e^r·2^n is normal, so the product is an
// add to e^r's exponent field: n ≤ 126, and n = −126 only where x ≤ −125.5·ln 2,
// i.e. r = x + 126·ln 2 > 0.33 and e^r ≥ 1.
constexpr float kExpArgumentLimit = 87.0f;

// `fast` where every lane of `ok` holds, else the library's result for the
// whole vector (`fallback`, emitted in its own block, rarely taken).
llvm::Value* FastOrLibrary(llvm::IRBuilder<>& b, llvm::Value* fast, llvm::Value* ok, const char* name,
                           const std::function<llvm::Value*()>& fallback) {
  return IfThen(b, AnyLaneOutside(b, ok), fallback, fast, name, /*unlikely=*/true);
}

// 2^n for f32 lanes holding integers n in [-126, 127], by the exponent bits.
llvm::Value* Exp2OfInteger(llvm::IRBuilder<>& b, llvm::Value* n_float, llvm::Type* fty) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(fty)->getNumElements();
  llvm::Type* i32ty = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  return b.CreateBitCast(
      b.CreateShl(b.CreateAdd(b.CreateFPToSI(n_float, i32ty), llvm::ConstantInt::get(i32ty, 127)),
                  llvm::ConstantInt::get(i32ty, 23)),
      fty);
}


// x = 2^k·m for normal f32 lanes, m in [√½, √2) (0x3F3504F3 is √½'s bits):
// k as i32 lanes, m as float lanes, both exact.
std::pair<llvm::Value*, llvm::Value*> SplitMantissa(llvm::IRBuilder<>& b, llvm::Value* x) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto i = [&](uint32_t v) { return llvm::ConstantInt::get(ity, v); };
  llvm::Value* ix = b.CreateBitCast(x, ity);
  llvm::Value* k = b.CreateAShr(b.CreateSub(ix, i(0x3F3504F3u)), i(23));
  return {k, b.CreateBitCast(b.CreateSub(ix, b.CreateShl(k, i(23))), x->getType())};
}

// The lanes of f32 `x` that are normal, positive and finite (not 0,
// negatives, subnormals, ∞ or NaN), on the bits: one integer compare.
llvm::Value* NormalPositive(llvm::IRBuilder<>& b, llvm::Value* x) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  return b.CreateICmpULT(b.CreateSub(b.CreateBitCast(x, ity), llvm::ConstantInt::get(ity, 0x00800000u)),
                         llvm::ConstantInt::get(ity, 0x7F000000u));
}

// An AVX-512 intrinsic. The table and range paths are asked for only on
// VectorIsa::Avx512 (lower_function.h), which x86-64 CPUs alone have; this
// checks that no other target's module (AArch64's) gets one.
llvm::Value* Avx512Intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args) {
  const std::string& triple = b.GetInsertBlock()->getModule()->getTargetTriple();
  TILEC_CHECK(triple.empty() || llvm::Triple(triple).getArch() == llvm::Triple::x86_64,
              "llvm: an AVX-512 intrinsic in a module for {}", triple);
  return b.CreateIntrinsic(id, {}, args);
}

// row[index] for each lane of a 16-lane i32 `index` (0 to 15): AVX-512's
// vpermps, the 16-entry table one zmm register.
llvm::Value* Lookup16(llvm::IRBuilder<>& b, const float (&row)[16], llvm::Value* index) {
  llvm::Constant* table = llvm::ConstantDataVector::get(b.getContext(), llvm::ArrayRef<float>(row));
  return Avx512Intrinsic(b, llvm::Intrinsic::x86_avx512_permvar_sf_512, {table, index});
}

// `op` on each 16 lanes of `operands` (vectors of the same lanes, a multiple
// of 16: AVX-512's intrinsics take one zmm register), the results end to end.
llvm::Value* Per16Lanes(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& operands,
                        const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& op) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(operands.front()->getType())->getNumElements();
  if (lanes == 16) return op(operands);
  std::vector<llvm::Value*> parts;
  for (unsigned at = 0; at < lanes; at += 16) {
    std::vector<llvm::Value*> slice;
    for (llvm::Value* v : operands) slice.push_back(b.CreateShuffleVector(v, llvm::createSequentialMask(at, 16, 0)));
    parts.push_back(op(slice));
  }
  return llvm::concatenateVectors(b, parts);
}

// row[index & 31] for each lane of an i32 `index` whose lanes are a multiple
// of 16: AVX-512's vpermi2ps, the 32-entry table two zmm registers (only the
// index's low five bits count).
llvm::Value* Lookup32(llvm::IRBuilder<>& b, const float (&row)[32], llvm::Value* index) {
  llvm::ArrayRef<float> all(row);
  llvm::Constant* low = llvm::ConstantDataVector::get(b.getContext(), all.take_front(16));
  llvm::Constant* high = llvm::ConstantDataVector::get(b.getContext(), all.drop_front(16));
  return Per16Lanes(b, {index}, [&](const std::vector<llvm::Value*>& v) {
    return Avx512Intrinsic(b, llvm::Intrinsic::x86_avx512_vpermi2var_ps_512, {low, v[0], high});
  });
}

// max(|x|, |y|) for f32 vectors whose lanes are a multiple of 16: AVX-512's
// vrangeps (a NaN lane gives NaN).
llvm::Value* MaxAbs(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  auto* f16 = llvm::FixedVectorType::get(b.getFloatTy(), 16);
  return Per16Lanes(b, {x, y}, [&](const std::vector<llvm::Value*>& v) {
    // imm 0b1011: the larger magnitude, sign cleared; all 16 lanes, current rounding.
    return Avx512Intrinsic(b, llvm::Intrinsic::x86_avx512_mask_range_ps_512,
                           {v[0], v[1], b.getInt32(0b1011), llvm::PoisonValue::get(f16), b.getInt16(-1),
                            b.getInt32(4)});
  });
}

// |w| ≤ limit for f32 lanes, on the bits (an and and an integer compare, off
// the multipliers): false for NaN, and for ±∞ unless `limit` is.
llvm::Value* MagnitudeAtMost(llvm::IRBuilder<>& b, llvm::Value* w, float limit) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(w->getType())->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  return b.CreateICmpULE(b.CreateAnd(b.CreateBitCast(w, ity), llvm::ConstantInt::get(ity, 0x7FFFFFFFu)),
                         llvm::ConstantInt::get(ity, llvm::bit_cast<uint32_t>(limit)));
}

// min(v, limit) as a select on `v < limit`: NaN lanes of `v` give `limit`.
llvm::Value* AtMost(llvm::IRBuilder<>& b, llvm::Value* v, float limit) {
  llvm::Value* c = llvm::ConstantFP::get(v->getType(), static_cast<double>(limit));
  return b.CreateSelect(b.CreateFCmpOLT(v, c), v, c);
}

// An odd function's value from `r`, its value at |x|: r with x's sign, and
// x itself where x is NaN.
llvm::Value* OddResult(llvm::IRBuilder<>& b, llvm::Value* r, llvm::Value* x) {
  r = b.CreateIntrinsic(llvm::Intrinsic::copysign, {r->getType()}, {r, x});
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
}

}  // namespace

llvm::Value* IfThen(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<llvm::Value*()>& taken,
                    llvm::Value* otherwise, std::string_view name, bool unlikely) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* from = b.GetInsertBlock();
  auto* yes = llvm::BasicBlock::Create(ctx, fmt::format("{}.special", name), fn);
  auto* join = llvm::BasicBlock::Create(ctx, fmt::format("{}.end", name), fn);
  b.CreateCondBr(cond, yes, join, unlikely ? llvm::MDBuilder(ctx).createBranchWeights(1, 1000) : nullptr);
  b.SetInsertPoint(yes);
  llvm::Value* v = taken();
  llvm::BasicBlock* yes_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode* phi = b.CreatePHI(otherwise->getType(), 2);
  phi->addIncoming(v, yes_end);
  phi->addIncoming(otherwise, from);
  return phi;
}

bool HasFastPath(sem::CallFn fn, int width) {
  return (fn == sem::CallFn::Pow || fn == sem::CallFn::Exp || fn == sem::CallFn::Log) && width > 1;
}

bool HasFastPath(sem::CallFn fn, const sem::Type& t) {
  return t.dtype != lang::DataType::F64 && HasFastPath(fn, t.width);
}

bool HasInlineMath(sem::CallFn fn, int width) {
  return fn == sem::CallFn::Erf || (fn == sem::CallFn::Tanh && width > 1) || HasFastPath(fn, width);
}

llvm::Value* AnyLaneOutside(llvm::IRBuilder<>& b, llvm::Value* ok) { return b.CreateOrReduce(b.CreateNot(ok)); }

FastMath ExpFast(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* fty = x->getType();
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  // n = round(x / ln 2), r = x − n·ln 2 in two steps (Cody and Waite: ln 2's
  // high part has 16 significant bits, so n·high is exact for |n| < 2^8).
  llvm::Value* n = Unary(b, llvm::Intrinsic::rint, b.CreateFMul(x, f(1.4426950408889634)));
  llvm::Value* r = Fma(b, n, f(-0.693145751953125), x);
  r = Fma(b, n, f(-1.4286068203094172e-06), r);
  // e^r·2^n as an integer add of n to e^r's exponent bits (off the
  // multipliers); the lanes it holds for, |x| < 87, on the bits too: one
  // and and one integer compare, false for ±∞ and NaN.
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(fty)->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto i = [&](uint32_t v) { return llvm::ConstantInt::get(ity, v); };
  llvm::Value* fast = b.CreateBitCast(
      b.CreateAdd(b.CreateBitCast(OnePlus(b, kExpR, std::size(kExpR), r), ity),
                  b.CreateShl(b.CreateFPToSI(n, ity), i(23))),
      fty);
  return {fast, b.CreateICmpULT(b.CreateAnd(b.CreateBitCast(x, ity), i(0x7FFFFFFFu)),
                                i(llvm::bit_cast<uint32_t>(kExpArgumentLimit)))};
}

llvm::Value* InlineExp(llvm::IRBuilder<>& b, llvm::Value* x, const std::function<llvm::Value*()>& fallback) {
  FastMath e = ExpFast(b, x);
  return FastOrLibrary(b, e.value, e.ok, "exp", fallback);
}

FastMath LogFast(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512_table) {
  llvm::Type* fty = x->getType();
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  if (avx512_table) {
    // x = 2^k·z, z in [0.699, 1.398), and the interval of z from the same
    // bits; r = z·c − 1 in one FMA, log x = k·ln 2 + (−log c) + log1p(r).
    // No division: 7 FMAs and 2 vpermps where the series costs a division
    // and 7 FMAs. |k| ≥ 1 makes |log x| ≥ 0.33, so ln 2 in f32 suffices.
    llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), 16);
    auto i = [&](uint32_t v) { return llvm::ConstantInt::get(ity, v); };
    llvm::Value* ix = b.CreateBitCast(x, ity);
    llvm::Value* t = b.CreateSub(ix, i(kLogTableOffset));
    llvm::Value* k = b.CreateAShr(t, i(23));
    llvm::Value* index = b.CreateAnd(b.CreateLShr(t, i(19)), i(15));
    llvm::Value* z = b.CreateBitCast(b.CreateSub(ix, b.CreateShl(k, i(23))), fty);
    llvm::Value* r = Fma(b, z, Lookup16(b, kLogC, index), f(-1.0));
    std::vector<float> p(std::begin(kLog1pP), std::end(kLog1pP));
    llvm::Value* q = Fma(b, b.CreateFMul(r, r), Horner(b, p, r), r);
    llvm::Value* s = b.CreateFAdd(Lookup16(b, kLogNegLogC, index), q);
    return {Fma(b, b.CreateSIToFP(k, fty), f(std::log(2.0)), s), NormalPositive(b, x)};
  }
  // x = 2^k·(1 + g), 1 + g in [√½, √2) from the bits (g exact); with
  // s = g/(2 + g), ln(1 + g) = 2·atanh(s) = g − s·(g − s²·Q(s²)), so the
  // exact g carries the result and the division's rounding only touches the
  // correction (about g²/2); k·ln 2 in two parts (Cody–Waite, as exp).
  auto [k, m] = SplitMantissa(b, x);
  llvm::Value* g = b.CreateFSub(m, f(1.0));
  llvm::Value* s = b.CreateFDiv(g, b.CreateFAdd(g, f(2.0)));
  llvm::Value* w = b.CreateFMul(s, s);
  // 2/3, 2/5, 2/7, 2/9: the first term left out, (2/11)·s^11, is below
  // 2^-28.9 of ln(1 + g) where it is largest (s² = 0.0295, g = √2 − 1).
  std::vector<float> q;
  for (int j = 1; j <= 4; ++j) q.push_back(static_cast<float>(2.0 / (2 * j + 1)));
  llvm::Value* kf = b.CreateSIToFP(k, fty);
  llvm::Value* corr = Fma(b, s, Fma(b, b.CreateFNeg(w), Horner(b, q, w), g), b.CreateFMul(kf, f(-1.4286068203094172e-06)));
  llvm::Value* fast = Fma(b, kf, f(0.693145751953125), b.CreateFSub(g, corr));
  // Outside normal finite x > 0 (0, negatives, subnormals, ∞, NaN): the library.
  return {fast, NormalPositive(b, x)};
}

llvm::Value* InlineLog(llvm::IRBuilder<>& b, llvm::Value* x, const std::function<llvm::Value*()>& fallback,
                       bool avx512_table) {
  FastMath l = LogFast(b, x, avx512_table);
  return FastOrLibrary(b, l.value, l.ok, "log", fallback);
}

namespace {

// erf on 16-lane vectors with AVX-512: y = 4·min(|x|, 3.92), k = ⌊y⌋, and
// the polynomial of interval k in u = y − k (both exact), its coefficients
// looked up by vpermps; 5 FMAs and 6 permutes (which run beside the
// multipliers) where the two polynomials cost 18 FMAs.
llvm::Value* ErfByTable(llvm::IRBuilder<>& b, llvm::Value* x) {
  auto* ty = llvm::cast<llvm::FixedVectorType>(x->getType());
  auto c = [&](float v) { return llvm::ConstantFP::get(ty, static_cast<double>(v)); };
  llvm::Value* ax = Unary(b, llvm::Intrinsic::fabs, x);
  // NaN compares false: the clamp gives 3.92, the NaN is put back at the end.
  llvm::Value* y = b.CreateFMul(AtMost(b, ax, kErfOne), c(4.0f));
  llvm::Value* k = Unary(b, llvm::Intrinsic::floor, y);
  llvm::Value* u = b.CreateFSub(y, k);
  llvm::Value* index = b.CreateFPToSI(k, llvm::FixedVectorType::get(b.getInt32Ty(), 16));
  auto coefficient = [&](size_t j) { return Lookup16(b, kErfTable[j], index); };
  llvm::Value* r = coefficient(std::size(kErfTable) - 1);
  for (size_t j = std::size(kErfTable) - 1; j-- > 0;) r = Fma(b, r, u, coefficient(j));
  return OddResult(b, AtMost(b, r, 1.0f), x);
}

}  // namespace

llvm::Value* InlineErf(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512_table) {
  if (avx512_table) return ErfByTable(b, x);
  llvm::Type* ty = x->getType();
  auto c = [&](float v) { return llvm::ConstantFP::get(ty, static_cast<double>(v)); };
  llvm::Value* ax = Unary(b, llvm::Intrinsic::fabs, x);
  std::vector<float> small_c(std::begin(kErfSmall), std::end(kErfSmall));
  std::vector<float> big_c(std::begin(kErfcBig), std::end(kErfcBig));
  llvm::Value* small = b.CreateFMul(ax, Horner(b, small_c, b.CreateFMul(ax, ax)));
  // NaN compares false: the clamp gives 3.92, the NaN is put back at the end.
  llvm::Value* clamped = AtMost(b, ax, kErfOne);
  llvm::Value* big =
      b.CreateFSub(c(1.0f), Horner(b, big_c, b.CreateFSub(clamped, c(kErfcBigMiddle))));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(ax, c(kErfSplit)), small, big);
  return OddResult(b, b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {r, c(1.0f)}), x);
}

llvm::Value* InlineTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* fty = x->getType();
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  // tanh t = −m/(2 + m) with m = expm1(−2t), t = min(|x|, 9.1): m is in
  // (−1, 0] and 2 + m in (1, 2], so nothing cancels and tiny t keep their
  // relative accuracy (one formula for all t, no select between two).
  // NaN compares false: the clamp gives 9.1, the NaN is put back at the end.
  llvm::Value* ax = Unary(b, llvm::Intrinsic::fabs, x);
  llvm::Value* t = AtMost(b, ax, kTanhClamp);
  // expm1(z) = 2^n·e + (2^n − 1), e = expm1(r), r = z − n·ln 2 for z = −2t:
  // n is in [−26, 0], so one FMA with ln 2 rounded to f32 keeps r within
  // 5e-8 (2^n scales that to below 0.05 ULP of tanh), 2^n ± 1 are exact and
  // 2 + m is one FMA from the same terms instead of a second rounding of m.
  // Computed negated: k = −n, u = −r = 2t − k·ln 2 (t + t is an add, off the
  // multipliers), e = u²·M(−u) − u.
  llvm::Value* k = Unary(b, llvm::Intrinsic::rint, b.CreateFMul(t, f(2.0 / std::log(2.0))));
  llvm::Value* u = Fma(b, k, f(-std::log(2.0)), b.CreateFAdd(t, t));
  std::vector<float> mc(std::begin(kTanhExpm1), std::end(kTanhExpm1));
  for (size_t j = 1; j < mc.size(); j += 2) mc[j] = -mc[j];
  llvm::Value* e = Fma(b, b.CreateFMul(u, u), Horner(b, mc, u), b.CreateFNeg(u));
  llvm::Value* n = b.CreateFNeg(k);
  llvm::Value* p = Exp2OfInteger(b, n, fty);
  llvm::Value* m = Fma(b, p, e, b.CreateFSub(p, f(1.0)));
  llvm::Value* d = Fma(b, p, e, b.CreateFAdd(p, f(1.0)));
  return OddResult(b, b.CreateFDiv(b.CreateFNeg(m), d), x);
}

namespace {

// pow's first tier on whole 16-lane AVX-512 vectors: log2 x = k + T + log2(1 + r)
// with r = m·c − 1 exact and T = −log2 c looked up for m's interval, 2^z =
// 2^(j/32)·2^g·2^n with 2^(j/32) looked up (hal/llvm/fit/fit_pow_table.py); T + r/ln 2,
// y·k and y·log2 m are f32 pairs. No division: 17 multiply-adds and five
// vpermi2ps where PowBySeries spends 24 and a division. Holds for x in
// [0.75·2^-125, 1.5·2^125), y finite, |y·log2 m| ≤ 16 and |y·log2 x| ≤ 125.
FastMath PowByTable(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* fty = x->getType();
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(fty)->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  auto i = [&](uint32_t v) { return llvm::ConstantInt::get(ity, v); };
  const double c0 = 1.0 / std::log(2.0);
  const float c0_hi = static_cast<float>(c0), c0_lo = static_cast<float>(c0 - c0_hi);

  llvm::Value* t = b.CreateSub(b.CreateBitCast(x, ity), i(kPowTableOffset));
  llvm::Value* k = b.CreateAShr(t, i(23));
  llvm::Value* index = b.CreateLShr(t, i(18));  // the interval: its low five bits
  llvm::Value* m = b.CreateBitCast(b.CreateAdd(b.CreateAnd(t, i(0x7FFFFFu)), i(kPowTableOffset)), fty);
  llvm::Value* r = Fma(b, m, Lookup32(b, kPowC, index), f(-1.0));  // exact
  // T + r·c0_hi as a pair (Fast2Sum: |T| ≥ |r·c0_hi| or T = 0, hal/llvm/fit/fit_pow_table.py
  // checks), the rest of log2(1 + r) in `lo`: r·(c0_lo + r·Q(r)).
  llvm::Value* p = b.CreateFMul(r, f(c0_hi));
  llvm::Value* p_lo = Fma(b, r, f(c0_hi), b.CreateFNeg(p));
  llvm::Value* big = Lookup32(b, kPowNegLog2C, index);
  llvm::Value* l = b.CreateFAdd(big, p);
  llvm::Value* l_lo = b.CreateFSub(p, b.CreateFSub(l, big));
  std::vector<float> tail{c0_lo};
  tail.insert(tail.end(), std::begin(kPowLog2Q), std::end(kPowLog2Q));
  l_lo = Fma(b, r, Horner(b, tail, r),
             b.CreateFAdd(b.CreateFAdd(Lookup32(b, kPowNegLog2CLow, index), p_lo), l_lo));
  // z = y·k + y·(l + l_lo), each product a pair.
  llvm::Value* kf = b.CreateSIToFP(k, fty);
  llvm::Value* a = b.CreateFMul(y, kf);
  llvm::Value* a_lo = Fma(b, y, kf, b.CreateFNeg(a));
  llvm::Value* yl = b.CreateFMul(y, l);
  llvm::Value* yl_lo = Fma(b, y, l_lo, Fma(b, y, l, b.CreateFNeg(yl)));
  // z rounded to a multiple of 1/32 by adding 1.5·2^18 (its last five
  // mantissa bits are then j = n mod 32 and the bits above n div 32); g = z − n/32
  // from the parts, the first difference exact.
  llvm::Value* z = b.CreateFAdd(a, b.CreateFAdd(yl, yl_lo));
  llvm::Value* shifted = b.CreateFAdd(z, f(0x1.8p18));
  llvm::Value* n = b.CreateFSub(shifted, f(0x1.8p18));
  llvm::Value* g = b.CreateFAdd(b.CreateFAdd(b.CreateFSub(a, n), yl), b.CreateFAdd(yl_lo, a_lo));
  std::vector<float> x_c(std::begin(kPowExp2G), std::end(kPowExp2G));
  llvm::Value* e = b.CreateFMul(g, Horner(b, x_c, g));  // 2^g − 1
  llvm::Value* bits = b.CreateBitCast(shifted, ity);
  llvm::Value* j = Lookup32(b, kPowExp2J, bits);
  llvm::Value* v = b.CreateFAdd(j, Fma(b, j, e, Lookup32(b, kPowExp2JLow, bits)));
  // 2^(j/32)·2^g is in [0.98, 2): n div 32 (|·| ≤ 125, checked below) goes
  // into its exponent field, off the multipliers.
  llvm::Value* value = b.CreateBitCast(
      b.CreateAdd(b.CreateBitCast(v, ity), b.CreateShl(b.CreateAnd(bits, i(~31u)), i(18))), fty);

  // The lanes it holds for, on the bits: |y·l| ≤ 16, which fails for y =
  // ±∞ or NaN too; max(|k|, |z|) ≤ 125 (AVX-512's vrangeps), which fails
  // for x that is 0, negative, subnormal, ∞ or NaN (|k| ≥ 127) and for
  // normal x below 2^-125 or from 2^125 on (the next tier's).
  llvm::Value* k_or_z = b.CreateBitCast(MaxAbs(b, kf, z), ity);  // ≥ 0 or NaN
  return {value, b.CreateAnd(MagnitudeAtMost(b, yl, kPowTableProductLimit),
                             b.CreateICmpULE(k_or_z, i(llvm::bit_cast<uint32_t>(125.0f))))};
}

// pow's first tier elsewhere, all in f32 lanes (no division in
// f64): x = 2^k·m with m in [√½, √2) from the bits; log2 m = c0·s + s³·T(s²),
// s = (m − 1)/(m + 1), where s and c0·s are carried as f32 pairs (hi + lo:
// Fast2Sum for m + 1, FMA residuals for the quotient and the products) and
// only the tail T, at most 1% of the whole, is plain f32; y·k and y·log2 m
// are split likewise, so the fraction f = y·log2 x − n reaches 2^f with an
// error near 2^-24 while |y·log2 m| ≤ 8 (the tail's 2^-30 times 8).
// Returns the value and the lanes it holds for: x normal and finite, y
// finite, |y·log2 m| ≤ 8 and |n| ≤ 125 (a normal result). 2^f and T are
// hal/llvm/fit/fit_exp_log.py's.
FastMath PowBySeries(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* fty = x->getType();
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };

  auto [k, m] = SplitMantissa(b, x);
  llvm::Value* u = b.CreateFSub(m, f(1.0));  // exact (Sterbenz)
  llvm::Value* v = b.CreateFAdd(f(1.0), m);  // Fast2Sum: 1 has the larger exponent
  llvm::Value* v_lo = b.CreateFSub(m, b.CreateFSub(v, f(1.0)));
  llvm::Value* rcp = b.CreateFDiv(f(1.0), v);
  llvm::Value* s = b.CreateFMul(u, rcp);
  llvm::Value* res = Fma(b, b.CreateFNeg(s), v, u);  // u − s·v, exact
  res = Fma(b, b.CreateFNeg(s), v_lo, res);
  llvm::Value* s_lo = b.CreateFMul(res, rcp);
  // The tail from s rounded to f32 (s alone is within 2^-24 of it).
  llvm::Value* s_f32 = b.CreateFAdd(s, s_lo);
  llvm::Value* s2 = b.CreateFMul(s_f32, s_f32);
  std::vector<float> tail_c(std::begin(kLog2Tail), std::end(kLog2Tail));
  llvm::Value* tail = b.CreateFMul(b.CreateFMul(s_f32, s2), Horner(b, tail_c, s2));
  const double c0 = 2.0 / std::log(2.0);
  const float c0_hi = static_cast<float>(c0), c0_lo = static_cast<float>(c0 - c0_hi);
  llvm::Value* l_hi = b.CreateFMul(f(c0_hi), s);
  llvm::Value* l_lo = Fma(b, f(c0_hi), s, b.CreateFNeg(l_hi));
  l_lo = b.CreateFAdd(l_lo, Fma(b, f(c0_lo), s, b.CreateFMul(f(c0_hi), s_lo)));
  l_lo = b.CreateFAdd(l_lo, tail);

  llvm::Value* kf = b.CreateSIToFP(k, fty);
  llvm::Value* a = b.CreateFMul(y, kf);
  llvm::Value* a_lo = Fma(b, y, kf, b.CreateFNeg(a));
  llvm::Value* t = b.CreateFMul(y, l_hi);
  llvm::Value* t_lo = Fma(b, y, l_lo, Fma(b, y, l_hi, b.CreateFNeg(t)));
  // n from the whole of y·log2 m: t_lo holds the tail T, up to 1% of t.
  llvm::Value* n = Unary(b, llvm::Intrinsic::rint, b.CreateFAdd(a, b.CreateFAdd(t, t_lo)));
  llvm::Value* frac = b.CreateFAdd(b.CreateFAdd(b.CreateFSub(a, n), t), b.CreateFAdd(t_lo, a_lo));
  // 2^f lies in [√½, √2]: scaling it by 2^n (|n| ≤ 125, checked below) is an
  // integer add to its exponent field, which keeps the multiplier free.
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(fty)->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto i = [&](uint32_t v) { return llvm::ConstantInt::get(ity, v); };
  llvm::Value* ni = b.CreateFPToSI(n, ity);
  llvm::Value* value = b.CreateBitCast(
      b.CreateAdd(b.CreateBitCast(Exp2OfFraction(b, frac), ity), b.CreateShl(ni, i(23))), fty);

  // The lanes it holds for, tested on the bits (integer compares, off the
  // floating-point multipliers that the rest keeps busy): x normal, positive
  // and finite; |t| <= 8, which fails for y = ±∞ or NaN too (t is then ±∞ or
  // NaN, ∞·0 at x = 1); |n| <= 125, which fails where the conversion of a
  // huge or NaN n gave INT_MIN.
  llvm::Value* ok = NormalPositive(b, x);
  ok = b.CreateAnd(ok, MagnitudeAtMost(b, t, kPowF32ProductLimit));
  ok = b.CreateAnd(ok, b.CreateICmpULE(b.CreateAdd(ni, i(125)), i(250)));
  return {value, ok};
}

}  // namespace

// pow's second tier: log2 x in f64 (the atanh series of the mantissa: every
// f32, subnormals too, is a normal f64), y·log2 x in f64 and 2^z in f32;
// lanes outside it take the library (`fallback`).
llvm::Value* PowBeyondFast(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y,
                           const std::function<llvm::Value*()>& fallback) {
  auto* fty = llvm::cast<llvm::FixedVectorType>(x->getType());
  unsigned lanes = fty->getNumElements();
  llvm::Type* dty = llvm::FixedVectorType::get(b.getDoubleTy(), lanes);
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt64Ty(), lanes);
  auto d = [&](double v) { return llvm::ConstantFP::get(dty, v); };
  auto i = [&](uint64_t v) { return llvm::ConstantInt::get(ity, v); };
  auto f = [&](float v) { return llvm::ConstantFP::get(fty, static_cast<double>(v)); };

  // log2 x = e + log2 m, m in [√½, √2): every f32 (subnormals too) is a
  // normal f64, so the exponent and mantissa are its bits.
  llvm::Value* bits = b.CreateBitCast(b.CreateFPExt(x, dty), ity);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, i(52)), i(1023));
  llvm::Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, i(0x000FFFFFFFFFFFFFull)), i(0x3FF0000000000000ull)), dty);
  llvm::Value* high = b.CreateFCmpOGT(m, d(std::sqrt(2.0)));
  m = b.CreateSelect(high, b.CreateFMul(m, d(0.5)), m);
  e = b.CreateAdd(e, b.CreateZExt(high, ity));
  llvm::Value* s = b.CreateFDiv(b.CreateFSub(m, d(1.0)), b.CreateFAdd(m, d(1.0)));
  llvm::Value* log2x =
      Fma(b, s, Horner(b, Log2SeriesCoefficients(), b.CreateFMul(s, s)), b.CreateSIToFP(e, dty));
  llvm::Value* z = b.CreateFMul(b.CreateFPExt(y, dty), log2x);

  // 2^z = 2^n · 2^(z − n), n = round(z): z − n is exact in f64, and its f32
  // rounding (|·| ≤ ½) moves 2^(z − n) by at most 2^-25.5 of itself, so the
  // polynomial and the scaling run in f32, 16 lanes to a zmm register.
  llvm::Value* n = Unary(b, llvm::Intrinsic::rint, z);
  llvm::Value* p = Exp2OfFraction(b, b.CreateFPTrunc(b.CreateFSub(z, n), fty));
  llvm::Value* fast = b.CreateFMul(p, Exp2OfInteger(b, n, fty));

  // Lanes outside the fast path (NaN compares false): x <= 0 or not finite,
  // y not finite, a result that overflows or is not normal.
  llvm::Value* inf = f(INFINITY);
  llvm::Value* ok = b.CreateAnd(b.CreateFCmpOGT(x, f(0.0f)), b.CreateFCmpOLT(x, inf));
  ok = b.CreateAnd(ok, b.CreateFCmpOLT(Unary(b, llvm::Intrinsic::fabs, y), inf));
  ok = b.CreateAnd(ok, b.CreateFCmpOLT(Unary(b, llvm::Intrinsic::fabs, z), d(kPowExponentLimit)));
  return FastOrLibrary(b, fast, ok, "pow", fallback);
}

FastMath PowFast(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool avx512_tables) {
  return avx512_tables ? PowByTable(b, x, y) : PowBySeries(b, x, y);
}

llvm::Value* InlinePow(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y,
                       const std::function<llvm::Value*()>& fallback, bool avx512_tables) {
  FastMath p = PowFast(b, x, y, avx512_tables);
  return IfThen(
      b, AnyLaneOutside(b, p.ok), [&] { return PowBeyondFast(b, x, y, fallback); }, p.value,
      "pow.wide", /*unlikely=*/true);
}

}  // namespace tilec::hal::cpu
