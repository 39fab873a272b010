import { QRPay } from 'vietnam-qr-pay';
const build = (o) => QRPay.initVietQR(o).build();
console.log(build({bankBin:'970436', bankNumber:'0011001932418', amount:'50000', purpose:'payd test'}));
console.log(build({bankBin:'970422', bankNumber:'0123456789'}));
console.log(build({bankBin:'999999', bankNumber:'0123456789'}));
